//! Which MPI functions the runtime handles, so that `build` and `analyze`
//! can warn before a long run (and the runtime can say so by name when the
//! call happens anyway).
//!
//! Four classes:
//!
//! * interposed: the runtime wraps the call (piggyback, clocks, trace);
//! * transparent: calls that neither send nor receive messages (queries,
//!   communicator and datatype management, timing): they pass straight to
//!   MPI and need nothing from the runtime;
//! * without clocks ([`WITHOUT_CLOCKS`]): collectives the runtime lets run
//!   but does not order events through (neighbourhood and persistent
//!   collectives, `MPI_Comm_idup`): the program runs as it would, but a
//!   send after one may be reported as a potential match it cannot be;
//! * unsupported ([`UNSUPPORTED`]): point-to-point calls the runtime cannot
//!   handle yet. A message sent by one of them would reach a receive that
//!   expects mbhybrid's piggyback header, so the runtime stops the job with
//!   a message naming the call.
//!
//! [`UNSUPPORTED`] is the runtime's `unsupported!` list exactly (a runtime
//! test compares them).

/// MPI functions the runtime stops the run at, naming them.
pub const UNSUPPORTED: &[&str] = &[
    "MPI_Isendrecv",
    "MPI_Isendrecv_replace",
    "MPI_Psend_init",
    "MPI_Precv_init",
    "MPI_Send_c",
    "MPI_Buffer_attach_c",
    "MPI_Buffer_detach_c",
    "MPI_Bsend_c",
    "MPI_Ssend_c",
    "MPI_Rsend_c",
    "MPI_Isend_c",
    "MPI_Ibsend_c",
    "MPI_Issend_c",
    "MPI_Irsend_c",
    "MPI_Recv_c",
    "MPI_Irecv_c",
    "MPI_Sendrecv_c",
    "MPI_Sendrecv_replace_c",
    "MPI_Mrecv_c",
    "MPI_Imrecv_c",
    "MPI_Send_init_c",
    "MPI_Bsend_init_c",
    "MPI_Ssend_init_c",
    "MPI_Rsend_init_c",
    "MPI_Recv_init_c",
    "MPI_Isendrecv_c",
    "MPI_Isendrecv_replace_c",
];

/// Collectives that run unchanged but carry no clocks.
pub const WITHOUT_CLOCKS: &[&str] = &[
    "MPI_Neighbor_allgather",
    "MPI_Neighbor_allgatherv",
    "MPI_Neighbor_alltoall",
    "MPI_Neighbor_alltoallv",
    "MPI_Neighbor_alltoallw",
    "MPI_Ineighbor_allgather",
    "MPI_Ineighbor_allgatherv",
    "MPI_Ineighbor_alltoall",
    "MPI_Ineighbor_alltoallv",
    "MPI_Ineighbor_alltoallw",
    "MPI_Barrier_init",
    "MPI_Bcast_init",
    "MPI_Reduce_init",
    "MPI_Allreduce_init",
    "MPI_Gather_init",
    "MPI_Gatherv_init",
    "MPI_Scatter_init",
    "MPI_Scatterv_init",
    "MPI_Allgather_init",
    "MPI_Allgatherv_init",
    "MPI_Alltoall_init",
    "MPI_Alltoallv_init",
    "MPI_Alltoallw_init",
    "MPI_Reduce_scatter_init",
    "MPI_Reduce_scatter_block_init",
    "MPI_Scan_init",
    "MPI_Exscan_init",
    "MPI_Comm_idup",
];

/// Why `function` cannot be verified fully by this version, or `None` when
/// the runtime handles it (interposed or transparent). Accepts `PMPI_`
/// names.
pub fn unsupported_reason(function: &str) -> Option<&'static str> {
    let name = function
        .strip_prefix('P')
        .filter(|n| n.starts_with("MPI_"))
        .unwrap_or(function);
    if UNSUPPORTED.contains(&name) {
        return Some("not supported by this version of the mbhybrid runtime: the run stops when the call is made");
    }
    WITHOUT_CLOCKS.contains(&name).then_some(
        "not followed by the runtime's clocks: it runs unchanged, but a send after it may be reported as a potential match it cannot be",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_calls_are_named() {
        assert!(unsupported_reason("MPI_Isendrecv").is_some());
        assert!(unsupported_reason("PMPI_Psend_init").is_some());
        // Persistent requests, matched probes and MPI_Cancel are
        // interposed.
        for call in [
            "MPI_Start",
            "PMPI_Recv_init",
            "MPI_Startall",
            "MPI_Cancel",
            "MPI_Mprobe",
        ] {
            assert!(unsupported_reason(call).is_none(), "{call}");
        }
        assert!(unsupported_reason("MPI_Send_c").unwrap().contains("stops"));
        assert!(unsupported_reason("MPI_Neighbor_alltoall")
            .unwrap()
            .contains("not followed by the runtime's clocks"));
        assert!(unsupported_reason("MPI_Send").is_none());
        assert!(unsupported_reason("MPI_Comm_rank").is_none());
    }
}
