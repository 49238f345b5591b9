//! Which MPI functions the runtime handles, so that `build` and `analyze`
//! can warn before a long run (and the runtime can say so by name when the
//! call happens anyway).
//!
//! Three classes:
//!
//! * interposed: the runtime wraps the call (piggyback, clocks, trace);
//! * transparent: calls that neither send nor receive messages (queries,
//!   communicator and datatype management, timing): they pass straight to
//!   MPI and need nothing from the runtime;
//! * unsupported: point-to-point or collective calls the runtime cannot
//!   handle yet. A message sent by one of them would reach a receive that
//!   expects mbhybrid's piggyback header, so the runtime stops the job with
//!   a message naming the call.
//!
//! Keep [`UNSUPPORTED`] in step with the runtime's wrappers.

/// MPI functions the runtime refuses at run time, with what to do instead.
pub const UNSUPPORTED: &[&str] = &[
    "MPI_Isendrecv",
    "MPI_Isendrecv_replace",
    "MPI_Psend_init",
    "MPI_Precv_init",
];

/// Why `function` cannot be verified by this version, or `None` when the
/// runtime handles it (interposed or transparent). Accepts `PMPI_` names.
pub fn unsupported_reason(function: &str) -> Option<&'static str> {
    let name = function
        .strip_prefix('P')
        .filter(|n| n.starts_with("MPI_"))
        .unwrap_or(function);
    UNSUPPORTED.contains(&name).then_some("not supported by this version of the mbhybrid runtime: the run stops when the call is made")
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
        assert!(unsupported_reason("MPI_Send").is_none());
        assert!(unsupported_reason("MPI_Comm_rank").is_none());
    }
}
