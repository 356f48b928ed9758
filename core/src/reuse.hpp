// Which rows of Q, K and V a forward pass must project, and which it keeps from the
// pass before on the same Trace: rows whose input did not change keep theirs (typing
// one word re-projects one row; moving the temperature none), and a new head count
// re-splits the kept Q, K, V into the new heads instead of recomputing them (the
// projections do not depend on how many heads they are cut into). Exact: a row's
// projection does not depend on the other rows, nor on which tile of the GEMM
// computes it.
#pragma once

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"
#include "workspace.hpp"

namespace mha::detail {

// Fills ws.q_rows and ws.kv_rows (the runs of rows to project), re-splits t.q, t.k,
// t.v if only the head count changed, records the plan in t.reuse and ws.proj_key.
// Call before t.in, t.cfg and t.weights take the new pass's values. `full`: the
// whole layer (pre-LN projects LN(x)), else the attention sublayer alone.
// `batch`: sequences stacked in in.x (ForwardBatch), whose rows are compared as one.
void PlanProjections(const Config& cfg, const Weights* weights, bool same_weights, const Inputs& in, int batch,
                     bool full, Trace& t, Workspace& ws);

}  // namespace mha::detail
