"""Running simulations: :class:`~kynemapy.run.simulation.Simulation`, the run loop
(:mod:`.loop`), the background HDF5 writer (:mod:`.writer`) and the progress bar."""
