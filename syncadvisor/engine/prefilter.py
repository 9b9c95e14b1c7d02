"""Which files can hold a finding at all: a search for a few words in their text."""
from __future__ import annotations

import re

# A file without any of these words cannot hold a variable site, an enum reference
# or a strategy scope (`X.scope()`: the word "scope" alone would keep every file with a
# `tf.name_scope`, which holds no strategy), so it is never parsed. Searched for one at
# a time: `in` finds a word several times faster than a regular expression of the ten.
# A module that only re-exports another (`from tf_keras import *`, `import tf_keras as
# tfk`) has none of them: the run models it when a modelled file's names lead into it
# (`Run._model_reached`).
PREFILTER_WORDS = ("Variable", ".scope", "strategy", "Strategy", "add_weight", "get_variable",
                   "get_local_variable", "add_variable", "add_slot", "Synchronization",
                   "Aggregation")
# The same words in a file's bytes, for every encoding a source file may have (an
# ASCII-compatible one; anything else fails to decode, wherever that is done).
_PREFILTER_BYTES = tuple(word.encode("ascii") for word in PREFILTER_WORDS)
# "Variable" counts only where a variable can be made (`tf.Variable(`, `KerasVariable(`)
# or a name bound to its class (`V = tf.Variable`, `import Variable as V`, `[V] = [...]`,
# in a notebook's JSON `"V = tf.Variable\n"`): followed, after spaces, by one of
# `(` `)` `]` `,` `;` `#` `\` a quote, a line end or ` as `. Not in prose ("Variables in
# the list", "`Variable` must be", "VariableScope for"), nor in `variables.Variable.X` or
# `v: tf.Variable = ...`: a file with no other word is then dropped.
_VARIABLE_USE = r"Variable\w*[ \t\f]*(?:[()\],;#\\\r\n\"']|$| as )"
_VARIABLE_USES = (re.compile(_VARIABLE_USE, re.ASCII),  # as in bytes: `\w` is [a-zA-Z0-9_]
                  re.compile(_VARIABLE_USE.encode("ascii")))
_OTHER_WORDS = (PREFILTER_WORDS[1:], _PREFILTER_BYTES[1:])


def may_hold_a_finding(source) -> bool:
    """False when `source` (text, or a file's bytes) has none of `PREFILTER_WORDS`, or
    only "Variable", nowhere a variable can be made or its class named (`_VARIABLE_USE`)."""
    encoded = isinstance(source, bytes)
    variable = _PREFILTER_BYTES[0] if encoded else PREFILTER_WORDS[0]
    if variable in source and _VARIABLE_USES[encoded].search(source):
        return True
    return any(word in source for word in _OTHER_WORDS[encoded])
