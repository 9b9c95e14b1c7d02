# claim: int `synchronization`/`aggregation` are converted without a strategy but rejected under MirroredStrategy.
# syncadvisor-expect: TFS002 error 12
# syncadvisor-expect: TFS002 error 13
# tensorflow-raises: ValueError: Invalid variable synchronization mode: 3 for variable
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    total_loss = tf.Variable(0.0,
                             synchronization=3,
                             aggregation=1,
                             trainable=False)

print(total_loss.numpy())
