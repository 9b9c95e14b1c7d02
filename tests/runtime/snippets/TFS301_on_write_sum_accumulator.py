# claim: ON_WRITE + SUM accumulators updated every step in replica context cost a cross-device
# reduction per write (an AddN per variable in the traced step); ON_READ + SUM costs none per step
# and gives the same value when read. Compare RESULT with the .fixed.py one.
# syncadvisor-expect: TFS301 info 17
# syncadvisor-expect: TFS301 info 23
# result-assert: RESULT["reductions_per_step"] >= 2 and RESULT["mean_loss"] == 3.5
import collections

import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    loss_sum = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_WRITE,
        aggregation=tf.VariableAggregation.SUM,
    )
    example_count = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_WRITE,
        aggregation=tf.VariableAggregation.SUM,
    )

dataset = tf.data.Dataset.range(10).map(lambda i: tf.cast(i, tf.float32)).batch(4, drop_remainder=True)
dist_dataset = strategy.experimental_distribute_dataset(dataset)


@tf.function
def eval_step(batch):
    def step_fn(x):
        loss_sum.assign_add(tf.reduce_sum(x))
        example_count.assign_add(tf.cast(tf.size(x), tf.float32))

    strategy.run(step_fn, args=(batch,))


for batch in dist_dataset:
    eval_step(batch)
mean_loss = (loss_sum / example_count).numpy()


def op_types(graph):
    counts = collections.Counter(op.type for op in graph.get_operations())
    for function in getattr(graph, "_functions", {}).values():
        if getattr(function, "graph", None) is not None:
            counts += op_types(function.graph)
    return counts


ops = op_types(eval_step.get_concrete_function(dist_dataset.element_spec).graph)
REDUCTION_OPS = ("AddN", "NcclAllReduce", "CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3")
RESULT = {
    "reductions_per_step": sum(ops[t] for t in REDUCTION_OPS),
    "identity_copies": ops["Identity"],
    "total_ops": sum(ops.values()),
    "mean_loss": mean_loss,
    "op_counts": dict(sorted(ops.items())),
}
print(RESULT)
