# Histogram publication with bit sampling (issue 6, paper 001): not built yet.
