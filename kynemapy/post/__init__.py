"""Looking at results: readable plots (:mod:`kynemapy.post.plots`), animations
(:mod:`kynemapy.post.animate`), the drawing geometry they share (:mod:`kynemapy.post.geometry`) and the
``pip install`` command of a missing optional extra (:mod:`kynemapy.post.extras`).

Nothing here is imported by ``import kynemapy``; matplotlib is imported on first use.
"""
