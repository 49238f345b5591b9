//! What the runtime knows about each communicator: the world rank of each
//! of its peers (the trace and the clocks speak world ranks), the rank of
//! this process in it, and its shadow communicator (a duplicate carrying
//! the runtime's own collectives).
//!
//! Entries are made on first use and dropped by `MPI_Comm_free`. World is
//! always known and needs no translation.

use crate::consts::{comm_world, SUCCESS};
use crate::handle::HandleBits;
use mpi_sys::{MPI_Comm, MPI_Group};
use std::os::raw::c_int;

/// One communicator.
#[derive(Debug)]
pub struct CommInfo {
    /// The handle.
    pub comm: MPI_Comm,
    /// An intercommunicator (peers are in the remote group).
    pub inter: bool,
    /// This process's rank in it.
    pub rank: c_int,
    /// World rank of each peer rank (the remote group's for an
    /// intercommunicator).
    pub world: Vec<i32>,
    /// The shadow, once made.
    pub shadow: Option<MPI_Comm>,
}

/// The communicators met so far.
#[derive(Debug)]
pub struct Comms {
    world_size: i32,
    entries: Vec<CommInfo>,
}

impl Comms {
    /// Knows `MPI_COMM_WORLD` only.
    pub fn new(world_size: i32) -> Self {
        Comms {
            world_size,
            entries: Vec::with_capacity(32),
        }
    }

    fn is_world(comm: MPI_Comm) -> bool {
        comm.bits() == comm_world().bits()
    }

    /// The entry of `comm`, made on first use. `None` for world or when
    /// MPI refuses to describe it (an invalid handle, which MPI will then
    /// report on the user's call).
    pub fn info(&mut self, comm: MPI_Comm) -> Option<&mut CommInfo> {
        if Self::is_world(comm) {
            return None;
        }
        let bits = comm.bits();
        let at = match self.entries.iter().position(|e| e.comm.bits() == bits) {
            Some(at) => at,
            None => {
                let info = describe(comm)?;
                self.entries.push(info);
                self.entries.len() - 1
            }
        };
        self.entries.get_mut(at)
    }

    /// The world rank of peer `rank` of `comm` (-1 when unknown).
    pub fn world_rank(&mut self, comm: MPI_Comm, rank: c_int) -> i32 {
        if Self::is_world(comm) {
            return if (0..self.world_size).contains(&rank) {
                rank
            } else {
                -1
            };
        }
        self.info(comm)
            .and_then(|info| usize::try_from(rank).ok().and_then(|r| info.world.get(r)))
            .copied()
            .unwrap_or(-1)
    }

    /// Whether `root` is no rank of `comm`, an intracommunicator the
    /// runtime knows: an invalid root, which MPI refuses at the call
    /// (`MPI_ERR_ROOT`: the root names a rank of the group, MPI-4.0
    /// §6.4-§6.6, §6.9.1). An intercommunicator's roots are named
    /// otherwise (`MPI_ROOT`, `MPI_PROC_NULL`), and a handle MPI does not
    /// know is MPI's to refuse.
    pub fn root_outside(&mut self, comm: MPI_Comm, root: c_int) -> bool {
        if Self::is_world(comm) {
            return !(0..self.world_size).contains(&root);
        }
        match self.info(comm) {
            Some(info) if !info.inter => usize::try_from(root)
                .ok()
                .and_then(|r| info.world.get(r))
                .is_none(),
            _ => false,
        }
    }

    /// The peer rank in `comm` of world rank `world` (`None` when it is not
    /// a peer).
    pub fn comm_rank(&mut self, comm: MPI_Comm, world: i32) -> Option<c_int> {
        if Self::is_world(comm) {
            return (0..self.world_size).contains(&world).then_some(world);
        }
        let info = self.info(comm)?;
        info.world
            .iter()
            .position(|&w| w == world)
            .and_then(|r| c_int::try_from(r).ok())
    }

    /// Forgets `comm` (it is being freed); returns its shadow to free.
    pub fn forget(&mut self, comm: MPI_Comm) -> Option<MPI_Comm> {
        let bits = comm.bits();
        let at = self.entries.iter().position(|e| e.comm.bits() == bits)?;
        self.entries.swap_remove(at).shadow
    }

    /// Every shadow made (for `MPI_Finalize` to free).
    pub fn take_shadows(&mut self) -> impl Iterator<Item = MPI_Comm> + '_ {
        self.entries.iter_mut().filter_map(|e| e.shadow.take())
    }
}

/// Asks MPI about `comm`.
fn describe(comm: MPI_Comm) -> Option<CommInfo> {
    let mut inter: c_int = 0;
    let mut rank: c_int = 0;
    // SAFETY: valid out-parameters; an invalid handle makes these fail (or
    // abort, as the program's own call would).
    let ok = unsafe {
        mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) == SUCCESS
            && mpi_sys::PMPI_Comm_rank(comm, &mut rank) == SUCCESS
    };
    if !ok {
        return None;
    }
    // SAFETY: a valid handle value; the group is freed below.
    let mut group: MPI_Group = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-parameter.
    let rc = unsafe {
        if inter != 0 {
            mpi_sys::PMPI_Comm_remote_group(comm, &mut group)
        } else {
            mpi_sys::PMPI_Comm_group(comm, &mut group)
        }
    };
    if rc != SUCCESS {
        return None;
    }
    let world = translate(group);
    // SAFETY: the group made above.
    unsafe { mpi_sys::PMPI_Group_free(&mut group) };
    Some(CommInfo {
        comm,
        inter: inter != 0,
        rank,
        world: world?,
        shadow: None,
    })
}

/// World ranks of every rank of `group`.
fn translate(group: MPI_Group) -> Option<Vec<i32>> {
    let mut size: c_int = 0;
    // SAFETY: valid group and out-parameter.
    if unsafe { mpi_sys::PMPI_Group_size(group, &mut size) } != SUCCESS {
        return None;
    }
    let ranks: Vec<c_int> = (0..size).collect();
    let mut world = vec![-1; ranks.len()];
    // SAFETY: a valid handle value; freed below.
    let mut world_group: MPI_Group = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-parameter.
    if unsafe { mpi_sys::PMPI_Comm_group(comm_world(), &mut world_group) } != SUCCESS {
        return None;
    }
    // SAFETY: `ranks` and `world` hold `size` entries.
    let rc = unsafe {
        mpi_sys::PMPI_Group_translate_ranks(
            group,
            size,
            ranks.as_ptr(),
            world_group,
            world.as_mut_ptr(),
        )
    };
    // SAFETY: the group made above.
    unsafe { mpi_sys::PMPI_Group_free(&mut world_group) };
    (rc == SUCCESS).then_some(world)
}
