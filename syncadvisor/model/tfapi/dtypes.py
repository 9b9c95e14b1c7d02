"""Dtypes, and what tensor constructors say of a variable's dtype and shape."""
from __future__ import annotations

from typing import Dict


INTEGER_DTYPES = frozenset(
    {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
     "qint8", "qint16", "qint32", "quint8", "quint16"}
)
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "half", "double",
                          "complex64", "complex128"})
# Modules whose attributes name dtypes: tf.int32, tf.dtypes.int32, np.int32.
DTYPE_MODULES = ("tensorflow.", "tensorflow.dtypes.", "tensorflow.compat.v1.", "numpy.",
                 "keras.ops.", "tensorflow.experimental.numpy.")
# Tensor constructors whose dtype says the variable's dtype:
# qualified name -> (positional index of dtype, keyword).
TENSOR_FACTORIES: Dict[str, int] = {
    "tensorflow.zeros": 1,
    "tensorflow.ones": 1,
    "tensorflow.constant": 1,
    "tensorflow.convert_to_tensor": 1,
    "tensorflow.cast": 1,
    "tensorflow.fill": -1,  # dtype follows the value
    "tensorflow.zeros_like": 1,
    "tensorflow.ones_like": 1,
    "tensorflow.range": -1,
    "numpy.zeros": 1,
    "numpy.ones": 1,
    "numpy.array": 1,
    "numpy.asarray": 1,
    "keras.ops.zeros": 1,
    "keras.ops.ones": 1,
}
# Tensor constructors whose dtype, when not given, is a literal value's: qualified
# name -> the argument that holds the value (0: the first, -1: the last).
VALUE_DTYPE_FACTORIES: Dict[str, int] = {
    "tensorflow.constant": 0,
    "tensorflow.convert_to_tensor": 0,
    "numpy.array": 0,
    "numpy.asarray": 0,
    "tensorflow.fill": -1,  # fill(dims, value)
    "tensorflow.range": 0,
}
# Tensor constructors whose dtype, when not given, is float32.
FLOAT32_FACTORIES = frozenset({"tensorflow.zeros", "tensorflow.ones", "keras.ops.zeros",
                               "keras.ops.ones"})
# Tensor constructors whose result is the same tensor on every replica when their
# arguments are literals or names.
CONSTANT_FACTORIES = frozenset({"tensorflow.constant", "tensorflow.ones", "tensorflow.zeros",
                                "tensorflow.fill", "tensorflow.cast"})
# Tensor constructors that take a shape: qualified name -> position of the shape argument.
SHAPE_FACTORIES: Dict[str, int] = {
    "tensorflow.zeros": 0, "tensorflow.ones": 0, "tensorflow.fill": 0, "tensorflow.empty": 0,
    "tensorflow.random.normal": 0, "tensorflow.random.uniform": 0,
    "tensorflow.random.truncated_normal": 0, "tensorflow.compat.v1.random_normal": 0,
    "tensorflow.compat.v1.zeros": 0, "tensorflow.compat.v1.ones": 0,
    "numpy.zeros": 0, "numpy.ones": 0, "numpy.full": 0, "numpy.empty": 0,
    "keras.ops.zeros": 0, "keras.ops.ones": 0, "keras.ops.full": 0,
}
# Tensor constructors whose shape is that of their first argument, a (nested) literal.
LITERAL_FACTORIES = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor",
                               "numpy.array", "numpy.asarray", "keras.ops.array"})
