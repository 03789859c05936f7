"""Looking at results: readable plots (:mod:`kynemapy.post.plots`), animations
(:mod:`kynemapy.post.animate`) and the drawing geometry they share (:mod:`kynemapy.post.geometry`).

Nothing here is imported by ``import kynemapy``; matplotlib is imported on first use.
"""
