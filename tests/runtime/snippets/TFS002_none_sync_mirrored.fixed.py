# claim: dropping `synchronization=None` (AUTO) runs; AUTO resolves to ON_WRITE under MirroredStrategy.
# result-assert: RESULT == "ON_WRITE"
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    learning_rate = tf.Variable(1e-3, trainable=False, name="learning_rate")

print("lr:", learning_rate.numpy())
RESULT = learning_rate.synchronization.name
