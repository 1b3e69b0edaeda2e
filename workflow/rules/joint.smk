# Joint-distribution estimation (issue 7, paper 004): not built yet.
