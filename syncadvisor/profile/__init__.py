"""The runtime profiler: the only part of syncadvisor that imports TensorFlow."""
