//! The runtime's own collectives in `MPI_Init`: the all-reduce by which
//! the ranks agree to trace and the two duplicates of world the protocol
//! runs on (`Rt::start`), made in one round of waiting.
//!
//! A rank that has the trace directory starts the duplicates with the
//! all-reduce, before it knows the others have it too: when they all do
//! (every run of `verify`), the three collectives progress together. A
//! rank without it starts them only once the all-reduce said some rank has
//! it, so each process issues the same collectives in the same order, as
//! MPI requires, and a job where no rank traces makes the all-reduce alone,
//! as before.
//!
//! They are waited for here, giving the core away between tests. MPI's
//! blocking collectives spin without yielding; with more ranks than cores
//! (the test suite runs 5 ranks on 2) every round of one then waits until
//! the peer it needs gets a time slice while this rank spins through its
//! own, a few milliseconds a round at 250 Hz. The three blocking calls one
//! after the other cost 50-80 ms of each run at 4 ranks and 160-200 ms at 8
//! on a 2-core machine (`BENCHMARKS.md`, "Time per interleaving"). Nothing
//! of the program's runs before they end, so what it computes is unchanged.

use crate::consts::{comm_world, int32, op_min, request_null, statuses_ignore, SUCCESS};
use mpi_sys::{MPI_Comm, MPI_Request};
use std::os::raw::c_int;

/// Tests made with a spin hint before a wait starts yielding: a collective
/// whose peers are all running ends within them.
const BUSY_PASSES: u32 = 64;

/// What the ranks agreed in `MPI_Init`.
pub struct Agreement {
    /// Some rank has the trace directory.
    pub any: bool,
    /// World's two duplicates, when every rank has it.
    pub shadows: Option<[MPI_Comm; 2]>,
}

/// Agrees with every other process linked with the runtime whether all
/// and whether any of them have the trace directory (`mine`: this one
/// has), and makes world's two duplicates when all do. An error is a
/// failed duplicate, which the runtime cannot start without.
pub fn agree(mine: bool) -> Result<Agreement, String> {
    let send = [i32::from(mine), -i32::from(mine)];
    let mut got = [0i32; 2];
    let mut comms = [comm_world(); 2];
    let mut requests = [request_null(); 3];
    let off = Agreement {
        any: mine,
        shadows: None,
    };
    // SAFETY: MPI is initialised; `send` and `got` hold two ints each and
    // live until the waits below return.
    let rc = unsafe {
        mpi_sys::PMPI_Iallreduce(
            send.as_ptr().cast(),
            got.as_mut_ptr().cast(),
            2,
            int32(),
            op_min(),
            comm_world(),
            &mut requests[0],
        )
    };
    if rc != SUCCESS {
        return Ok(off);
    }
    let started = if mine {
        start_duplicates(&mut comms, &mut requests[1..])?;
        3
    } else {
        1
    };
    match wait_yielding(&mut requests[..started]) {
        SUCCESS => {}
        _ if !mine => return Ok(off),
        rc => return Err(format!("MPI_Comm_idup of MPI_COMM_WORLD failed ({rc})")),
    }
    let (all, any) = (got[0] == 1, got[1] == -1);
    if !mine && any {
        // Some rank started the duplicates: take part.
        start_duplicates(&mut comms, &mut requests[1..])?;
        let rc = wait_yielding(&mut requests[1..]);
        if rc != SUCCESS {
            return Err(format!("MPI_Comm_idup of MPI_COMM_WORLD failed ({rc})"));
        }
    }
    if any && !all {
        for comm in &mut comms {
            // SAFETY: a duplicate made above, used by nothing.
            unsafe { mpi_sys::PMPI_Comm_free(comm) };
        }
    }
    Ok(Agreement {
        any,
        shadows: all.then_some(comms),
    })
}

/// Starts the two duplicates of world into `comms`.
fn start_duplicates(comms: &mut [MPI_Comm; 2], requests: &mut [MPI_Request]) -> Result<(), String> {
    for (comm, request) in comms.iter_mut().zip(requests.iter_mut()) {
        // SAFETY: MPI is initialised; `comm` and `request` are valid
        // out-parameters that live until the caller's wait returns.
        let rc = unsafe { mpi_sys::PMPI_Comm_idup(comm_world(), comm, request) };
        if rc != SUCCESS {
            return Err(format!("MPI_Comm_idup of MPI_COMM_WORLD failed ({rc})"));
        }
    }
    Ok(())
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
