"""Collision geometry between bodies (docs/contact.md, "Geometry").

The data flow: :mod:`.shapes` builds a shape table from the builder's shapes and places the
shapes at the nodes' current poses; :mod:`.broad` finds the candidate pairs whose world AABBs
overlap (sweep and prune); :mod:`.narrow` writes the contact points of one pair into a caller
buffer; :mod:`.query` runs the three on a set of node poses.  Nothing here imports the engine:
a contact solver calls these after each step.
"""
