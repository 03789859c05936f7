"""Element kernels: rigid-body masses and springs."""
