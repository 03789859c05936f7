"""Linear algebra of the Newton systems: sparsity patterns and slots (:mod:`.sparsity`), the
dense elimination program and partial pivoting (:mod:`.dense`), the sparse LU
(:mod:`.sparse_lu`) and its orderings (:mod:`.ordering`)."""
