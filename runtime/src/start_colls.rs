//! The runtime's own collectives in `MPI_Init`: the all-reduce by which
//! the ranks agree to trace (start.rs) and the two duplicates of world the
//! protocol runs on (`Rt::start`).
//!
//! They are started nonblocking and waited for here, giving the core away
//! between tests. MPI's blocking collectives spin without yielding; with
//! more ranks than cores (the test suite runs 5 ranks on 2) every round of
//! one then waits until the peer it needs gets a time slice while this
//! rank spins through its own, a few milliseconds a round at 250 Hz. The
//! three blocking calls cost 50-80 ms of each run at 4 ranks and 160-200 ms
//! at 8 on a 2-core machine; waited for this way, 7-15 and 15-45
//! (`BENCHMARKS.md`, "Time per interleaving"). Nothing of the program's
//! runs before they end, so what it computes is unchanged.

use crate::consts::{comm_world, int32, op_min, request_null, statuses_ignore, SUCCESS};
use mpi_sys::{MPI_Comm, MPI_Request};
use std::os::raw::c_int;

/// Tests made with a spin hint before a wait starts yielding: a collective
/// whose peers are all running ends within them.
const BUSY_PASSES: u32 = 64;

/// The element-wise minimum of `send` over world, every process taking
/// part; `None` when MPI failed.
pub fn min_over_world(send: [i32; 2]) -> Option<[i32; 2]> {
    let mut got = [0i32; 2];
    let mut request = request_null();
    // SAFETY: MPI is initialised; `send` and `got` hold two ints each and
    // live until the wait below returns.
    let rc = unsafe {
        mpi_sys::PMPI_Iallreduce(
            send.as_ptr().cast(),
            got.as_mut_ptr().cast(),
            2,
            int32(),
            op_min(),
            comm_world(),
            &mut request,
        )
    };
    (rc == SUCCESS && wait_yielding(std::slice::from_mut(&mut request)) == SUCCESS).then_some(got)
}

/// Two duplicates of world, made at once (each is a collective over world;
/// every rank starting the runtime makes both, in the same order).
pub fn two_world_duplicates() -> Result<[MPI_Comm; 2], String> {
    let mut comms = [comm_world(); 2];
    let mut requests = [request_null(); 2];
    for (comm, request) in comms.iter_mut().zip(requests.iter_mut()) {
        // SAFETY: MPI is initialised; `comm` and `request` are valid
        // out-parameters that live until the wait below returns.
        let rc = unsafe { mpi_sys::PMPI_Comm_idup(comm_world(), comm, request) };
        if rc != SUCCESS {
            return Err(format!("MPI_Comm_idup of MPI_COMM_WORLD failed ({rc})"));
        }
    }
    match wait_yielding(&mut requests) {
        SUCCESS => Ok(comms),
        rc => Err(format!("MPI_Comm_idup of MPI_COMM_WORLD failed ({rc})")),
    }
}

/// Waits for `requests`, testing them with a spin hint [`BUSY_PASSES`]
/// times and then yielding the core between tests.
fn wait_yielding(requests: &mut [MPI_Request]) -> c_int {
    let Ok(count) = c_int::try_from(requests.len()) else {
        return -1;
    };
    let mut passes = 0u32;
    loop {
        let mut done: c_int = 0;
        // SAFETY: `requests` holds `count` requests this module started;
        // statuses are ignored.
        let rc = unsafe {
            mpi_sys::PMPI_Testall(count, requests.as_mut_ptr(), &mut done, statuses_ignore())
        };
        if rc != SUCCESS || done != 0 {
            return rc;
        }
        if passes < BUSY_PASSES {
            passes += 1;
            std::hint::spin_loop();
        } else {
            // SAFETY: no arguments; always safe.
            unsafe { libc::sched_yield() };
        }
    }
}
