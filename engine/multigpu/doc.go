// Package multigpu places a transformer's layers on several devices and
// runs placements on CPU stand-ins (issue 16). It is pure Go and knows
// nothing of CUDA or HIP: devices are a name, free memory and a relative
// speed; layers are shapes.
//
// Three partitions, after section 4 of the Inferflow paper:
//
//   - by layer (pipeline): each device holds a contiguous range of layers
//     and hands the activations to the next;
//   - by tensor: every device holds a share of every layer: attention by
//     KV heads (a KV head with its query heads: Q/K/V rows and O columns
//     stay together), the FFN by columns of gate/up and the matching rows
//     of down; one all-reduce after O and one after down;
//   - hybrid: devices form groups of TensorGroup; each group is
//     tensor-partitioned, and the groups are chained by layer (the
//     paper's Table 4: 2 layer groups × 2 head shards).
//
// Layer and tensor partitions are hybrid ones with groups of one device and
// one group of all devices, so Plan has one algorithm: shares within a
// group in proportion to speed (or free memory when speed-proportional
// shares do not fit), then the layer ranges that minimise the slowest
// group's time per token under every device's memory cap (a bisection on
// that time with a greedy fill, which is exact for contiguous ranges).
//
// The executor (Chain, Run) computes a small matmul chain with the same
// split on stand-in devices that each have a memory cap: row splits and
// gathers are bit-identical to the unsplit chain; the all-reduces are
// ordered (bit-identical) or fast (within a stated bound).
package multigpu
