"""Byline's retrieval core: articles in, cited answers out."""

import numpy  # noqa: F401  (loads numpy's OpenBLAS, limited below)
from threadpoolctl import threadpool_limits

# One thread for numpy's BLAS. Byline's matrix products are small (one query vector against a
# few thousand sentence vectors) and run from several retrieval workers at once; OpenBLAS's idle
# threads also spin after each product, and on 2 cores that spinning stole the CPU from the next
# query embedding (measured: 24-27 ms instead of 9-10 ms). Only numpy's own OpenBLAS (prefix
# libscipy_openblas) is limited: FAISS's OpenBLAS shares FAISS's OpenMP pool, which index
# training needs, and torch has its own.
threadpool_limits(limits={"libscipy_openblas": 1})
