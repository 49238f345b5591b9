//! How many bytes an MPI call writes into a receive buffer, when its count
//! and datatype are constants: `MPI_Bcast(&iparams[0], 13, MPI_INT, ..)`
//! replaces all 52 bytes of `iparams`, so no element keeps what was stored
//! in it before (miniFE's `broadcast_parameters` packs per-rank values
//! into the array it broadcasts).
//!
//! Only calls whose count is the number of elements the buffer receives
//! are measured: `MPI_Gather`'s and `MPI_Allgather`'s count is per
//! process, so their buffers are left unmeasured.

use std::collections::HashMap;

use crate::consts::{self, ConstValue, LocalVars, MpiConstants};
use crate::ir::{Function, InstId};
use crate::mpi::{self, Role};

/// Per `(call, argument)`: the bytes it writes.
pub(crate) type Extents = HashMap<(InstId, u32), u64>;

/// Calls whose receive count is the whole buffer's.
const WHOLE_COUNT: &[&str] = &[
    "MPI_Bcast",
    "MPI_Ibcast",
    "MPI_Allreduce",
    "MPI_Iallreduce",
    "MPI_Reduce",
    "MPI_Ireduce",
    "MPI_Recv",
    "MPI_Irecv",
    "MPI_Mrecv",
    "MPI_Imrecv",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
    "MPI_Scan",
    "MPI_Iscan",
    "MPI_Exscan",
    "MPI_Iexscan",
    "MPI_Reduce_scatter_block",
];

/// The extents of the receive buffers of `f`'s MPI calls `sites`.
pub(crate) fn of(
    program: &dyn consts::Program,
    constants: &MpiConstants,
    f: &Function,
    vars: &LocalVars,
    sites: &[InstId],
) -> Extents {
    let mut out = Extents::new();
    let constant = |v| consts::resolve(program, f, vars, v).single().cloned();
    for &i in sites {
        let Some(name) = f.callee(i) else { continue };
        if !mpi::base_name(name).is_some_and(|b| WHOLE_COUNT.contains(&b)) {
            continue;
        }
        let Some(func) = mpi::lookup(name) else {
            continue;
        };
        let args = &f.insts[i as usize].ops;
        for b in func.buffers() {
            if !matches!(b.role, Role::RecvBuf | Role::InOutBuf) {
                continue;
            }
            let count = b.count.and_then(|c| args.get(c)).and_then(&constant);
            let size = args
                .get(b.datatype)
                .and_then(&constant)
                .and_then(|d| constants.datatype(&d).map(|t| t.size));
            if let (Some(ConstValue::Int(n)), Some(size)) = (count, size) {
                if n >= 0 {
                    out.insert((i, b.buffer as u32), (n as u64).saturating_mul(size));
                }
            }
        }
    }
    out
}
