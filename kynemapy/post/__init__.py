"""Looking at results: readable plots (:mod:`kynemapy.post.plots`), animations
(:mod:`kynemapy.post.animate`), the drawing geometry they share (:mod:`kynemapy.model.geometry`, also as
:mod:`kynemapy.post.geometry`) and the ``pip install`` command of a missing optional extra
(:mod:`kynemapy.run.extras`, also as :mod:`kynemapy.post.extras`).

Nothing here is imported by ``import kynemapy``; matplotlib is imported on first use.
"""
