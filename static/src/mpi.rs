//! What each MPI function is: its class, whether it ends a zone, and the
//! role of each of its arguments.

use mbh_trace::static_report::CallClass;

/// The role of one argument of an MPI function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Data sent (the pointed-to contents are read).
    SendBuf,
    /// Data received (written).
    RecvBuf,
    /// Both (`MPI_Sendrecv_replace`, `MPI_Bcast`).
    InOutBuf,
    /// Destination rank.
    Dest,
    /// Source rank of a receive or probe.
    Source,
    /// Tag of a send.
    Tag,
    /// Tag of a receive or probe.
    RecvTag,
    /// The element count of the buffer before it.
    Count,
    /// The datatype of the buffer before it.
    Datatype,
    /// Any other input: communicator, root, op, arrays of counts or of
    /// datatypes.
    In,
    /// A status read (`MPI_Get_count`).
    StatusIn,
    /// A status written.
    Status,
    /// An array of statuses written.
    Statuses,
    /// A request (or an array of them) read or written.
    Request,
    /// The index written by `Waitany`/`Testany`.
    Index,
    /// The indices written by `Waitsome`/`Testsome`.
    Indices,
    /// A flag written (`Test*`, `Iprobe`).
    Flag,
    /// Another output (a count, a rank, a new communicator).
    Out,
}

impl Role {
    /// Whether the argument's value or contents are read by the call.
    pub fn is_input(self) -> bool {
        matches!(
            self,
            Role::SendBuf
                | Role::InOutBuf
                | Role::Dest
                | Role::Source
                | Role::Tag
                | Role::RecvTag
                | Role::Count
                | Role::Datatype
                | Role::In
                | Role::StatusIn
        )
    }

    /// Whether the call writes through the argument.
    pub fn is_output(self) -> bool {
        matches!(
            self,
            Role::RecvBuf
                | Role::InOutBuf
                | Role::Status
                | Role::Statuses
                | Role::Index
                | Role::Indices
                | Role::Flag
                | Role::Out
        )
    }
}

/// What the analyses know about one MPI function.
#[derive(Debug, Clone)]
pub(crate) struct MpiFunction {
    pub class: CallClass,
    /// A blocking collective, a collective communicator constructor,
    /// `MPI_Init` or `MPI_Finalize`: it ends a zone.
    pub zone_boundary: bool,
    /// Argument roles; `None` when this table does not know the function
    /// (every argument is then taken as both read and written).
    pub roles: Option<Vec<Role>>,
}

impl MpiFunction {
    /// The role of argument `k`: from the table, or `In` and `Out` at once
    /// for unknown functions (see [`MpiFunction::is_input`]).
    pub fn role(&self, k: usize) -> Option<Role> {
        self.roles.as_ref().and_then(|r| r.get(k).copied())
    }

    /// Whether argument `k` is read (unknown functions: every argument).
    pub fn is_input(&self, k: usize) -> bool {
        match &self.roles {
            Some(_) => self.role(k).is_some_and(Role::is_input),
            None => true,
        }
    }

    /// Whether argument `k` is written through (unknown functions: every
    /// argument).
    pub fn is_output(&self, k: usize) -> bool {
        match &self.roles {
            Some(_) => self.role(k).is_some_and(Role::is_output),
            None => true,
        }
    }

    /// The buffer arguments with their datatype argument and, when it is a
    /// single number (not an array of counts), their count argument: the
    /// first `Count` and the `Datatype` after the buffer (`MPI_Reduce`'s
    /// two buffers share them).
    pub fn buffers(&self) -> Vec<BufferArgs> {
        let Some(roles) = &self.roles else {
            return Vec::new();
        };
        let is_buf = |r: &Role| matches!(r, Role::SendBuf | Role::RecvBuf | Role::InOutBuf);
        let mut out = Vec::new();
        for (k, role) in roles.iter().enumerate().filter(|(_, r)| is_buf(r)) {
            let mut count = None;
            for (j, r) in roles.iter().enumerate().skip(k + 1) {
                match r {
                    Role::Count if count.is_none() => count = Some(j),
                    Role::Datatype => {
                        out.push(BufferArgs {
                            role: *role,
                            buffer: k,
                            count,
                            datatype: j,
                        });
                        break;
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// The index of the first argument with role `role`.
    pub fn arg(&self, role: Role) -> Option<usize> {
        self.roles.as_ref()?.iter().position(|r| *r == role)
    }

    /// The communicator argument of a collective or of a communicator
    /// constructor: by the standard's convention, the last argument of a
    /// blocking collective, the one before the request of a nonblocking
    /// one, and the first of a constructor (`MPI_Comm_split(comm, ..)`,
    /// `MPI_Intercomm_create(local_comm, ..)`).
    pub fn communicator_arg(&self) -> Option<usize> {
        let roles = self.roles.as_ref()?;
        match self.class {
            CallClass::Communicator => (!roles.is_empty()).then_some(0),
            CallClass::Collective => {
                let request = usize::from(roles.last() == Some(&Role::Request));
                roles.len().checked_sub(1 + request)
            }
            _ => None,
        }
    }
}

/// One buffer argument of an MPI function, with the arguments that say
/// what it holds ([`MpiFunction::buffers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferArgs {
    /// `SendBuf`, `RecvBuf` or `InOutBuf`.
    pub role: Role,
    /// The buffer's argument index.
    pub buffer: usize,
    /// The count's, when it is one number.
    pub count: Option<usize>,
    /// The datatype's.
    pub datatype: usize,
}

/// `MPI_Foo` for `MPI_Foo` and `PMPI_Foo`; `None` for other names.
pub(crate) fn base_name(name: &str) -> Option<&str> {
    let name = name.strip_prefix('P').unwrap_or(name);
    name.strip_prefix("MPI_").map(|_| name)
}

/// Whether `name` is an MPI or PMPI function.
pub(crate) fn is_mpi(name: &str) -> bool {
    base_name(name).is_some()
}

/// Signatures: class, zone boundary, roles (space separated codes:
/// `sb rb ib c dt d s t rt x si st ss rq ix is f o`).
const TABLE: &[(&str, CallClass, bool, &str)] = {
    use CallClass::*;
    &[
        ("Send", Send, false, "sb c dt d t x"),
        ("Ssend", Send, false, "sb c dt d t x"),
        ("Bsend", Send, false, "sb c dt d t x"),
        ("Rsend", Send, false, "sb c dt d t x"),
        ("Isend", Send, false, "sb c dt d t x rq"),
        ("Issend", Send, false, "sb c dt d t x rq"),
        ("Ibsend", Send, false, "sb c dt d t x rq"),
        ("Irsend", Send, false, "sb c dt d t x rq"),
        ("Send_init", Send, false, "sb c dt d t x rq"),
        ("Ssend_init", Send, false, "sb c dt d t x rq"),
        ("Bsend_init", Send, false, "sb c dt d t x rq"),
        ("Rsend_init", Send, false, "sb c dt d t x rq"),
        ("Recv", Receive, false, "rb c dt s rt x st"),
        ("Irecv", Receive, false, "rb c dt s rt x rq"),
        ("Recv_init", Receive, false, "rb c dt s rt x rq"),
        ("Mrecv", Receive, false, "rb c dt rq st"),
        ("Imrecv", Receive, false, "rb c dt rq rq"),
        (
            "Sendrecv",
            SendReceive,
            false,
            "sb c dt d t rb c dt s rt x st",
        ),
        (
            "Sendrecv_replace",
            SendReceive,
            false,
            "ib c dt d t s rt x st",
        ),
        ("Probe", Probe, false, "s rt x st"),
        ("Iprobe", Probe, false, "s rt x f st"),
        ("Mprobe", Probe, false, "s rt x o st"),
        ("Improbe", Probe, false, "s rt x f o st"),
        ("Wait", Completion, false, "rq st"),
        ("Test", Completion, false, "rq f st"),
        ("Waitall", Completion, false, "x rq ss"),
        ("Testall", Completion, false, "x rq f ss"),
        ("Waitany", Completion, false, "x rq ix st"),
        ("Testany", Completion, false, "x rq ix f st"),
        ("Waitsome", Completion, false, "x rq o is ss"),
        ("Testsome", Completion, false, "x rq o is ss"),
        ("Start", Completion, false, "rq"),
        ("Startall", Completion, false, "x rq"),
        ("Request_free", Completion, false, "rq"),
        ("Cancel", Completion, false, "rq"),
        ("Request_get_status", Completion, false, "x f st"),
        ("Get_count", Other, false, "si x o"),
        ("Get_elements", Other, false, "si x o"),
        ("Get_elements_x", Other, false, "si x o"),
        ("Test_cancelled", Other, false, "si f"),
        ("Barrier", Collective, true, "x"),
        ("Bcast", Collective, true, "ib c dt x x"),
        ("Reduce", Collective, true, "sb rb c dt x x x"),
        ("Allreduce", Collective, true, "sb rb c dt x x"),
        ("Scan", Collective, true, "sb rb c dt x x"),
        ("Exscan", Collective, true, "sb rb c dt x x"),
        ("Reduce_scatter", Collective, true, "sb rb x dt x x"),
        ("Reduce_scatter_block", Collective, true, "sb rb c dt x x"),
        ("Gather", Collective, true, "sb c dt rb c dt x x"),
        ("Scatter", Collective, true, "sb c dt rb c dt x x"),
        ("Allgather", Collective, true, "sb c dt rb c dt x"),
        ("Alltoall", Collective, true, "sb c dt rb c dt x"),
        ("Gatherv", Collective, true, "sb c dt rb x x dt x x"),
        ("Scatterv", Collective, true, "sb x x dt rb c dt x x"),
        ("Allgatherv", Collective, true, "sb c dt rb x x dt x"),
        ("Alltoallv", Collective, true, "sb x x dt rb x x dt x"),
        ("Alltoallw", Collective, true, "sb x x x rb x x x x"),
        ("Neighbor_allgather", Collective, true, "sb c dt rb c dt x"),
        ("Neighbor_alltoall", Collective, true, "sb c dt rb c dt x"),
        (
            "Neighbor_allgatherv",
            Collective,
            true,
            "sb c dt rb x x dt x",
        ),
        (
            "Neighbor_alltoallv",
            Collective,
            true,
            "sb x x dt rb x x dt x",
        ),
        (
            "Neighbor_alltoallw",
            Collective,
            true,
            "sb x x x rb x x x x",
        ),
        ("Comm_rank", Communicator, false, "x o"),
        ("Comm_size", Communicator, false, "x o"),
        ("Comm_remote_size", Communicator, false, "x o"),
        ("Comm_dup", Communicator, true, "x o"),
        ("Comm_idup", Communicator, false, "x o rq"),
        ("Comm_dup_with_info", Communicator, true, "x x o"),
        ("Comm_split", Communicator, true, "x x x o"),
        ("Comm_split_type", Communicator, true, "x x x x o"),
        ("Comm_create", Communicator, true, "x x o"),
        ("Comm_create_group", Communicator, false, "x x x o"),
        ("Cart_create", Communicator, true, "x x x x x o"),
        ("Graph_create", Communicator, true, "x x x x x o"),
        ("Dist_graph_create", Communicator, true, "x x x x x x x x o"),
        (
            "Dist_graph_create_adjacent",
            Communicator,
            true,
            "x x x x x x x x x o",
        ),
        ("Intercomm_create", Communicator, true, "x x x x x o"),
        ("Intercomm_merge", Communicator, true, "x x o"),
        ("Comm_free", Communicator, false, "o"),
        ("Comm_group", Communicator, false, "x o"),
        ("Init", Other, true, "o o"),
        ("Init_thread", Other, true, "o o x o"),
        ("Finalize", Other, true, ""),
        ("Abort", Other, false, "x x"),
        ("Wtime", Other, false, ""),
        ("Wtick", Other, false, ""),
        ("Initialized", Other, false, "o"),
        ("Finalized", Other, false, "o"),
        ("Get_processor_name", Other, false, "o o"),
        ("Pcontrol", Other, false, "x"),
    ]
};

fn parse_roles(sig: &str) -> Vec<Role> {
    sig.split_whitespace()
        .map(|code| match code {
            "sb" => Role::SendBuf,
            "rb" => Role::RecvBuf,
            "ib" => Role::InOutBuf,
            "c" => Role::Count,
            "dt" => Role::Datatype,
            "d" => Role::Dest,
            "s" => Role::Source,
            "t" => Role::Tag,
            "rt" => Role::RecvTag,
            "si" => Role::StatusIn,
            "st" => Role::Status,
            "ss" => Role::Statuses,
            "rq" => Role::Request,
            "ix" => Role::Index,
            "is" => Role::Indices,
            "f" => Role::Flag,
            "o" => Role::Out,
            _ => Role::In,
        })
        .collect()
}

/// What the table knows about MPI function `name` (`MPI_*` or `PMPI_*`);
/// `None` for other names.
pub(crate) fn lookup(name: &str) -> Option<MpiFunction> {
    let base = base_name(name)?;
    let short = &base["MPI_".len()..];
    if let Some((_, class, boundary, sig)) = TABLE.iter().find(|(n, ..)| *n == short) {
        return Some(MpiFunction {
            class: *class,
            zone_boundary: *boundary,
            roles: Some(parse_roles(sig)),
        });
    }
    // Nonblocking collectives: the blocking signature plus a request.
    if let Some(rest) = short.strip_prefix('I') {
        let mut chars = rest.chars();
        let blocking: String = chars
            .next()
            .map(|c| c.to_ascii_uppercase())
            .into_iter()
            .chain(chars)
            .collect();
        if let Some((_, CallClass::Collective, _, sig)) =
            TABLE.iter().find(|(n, ..)| *n == blocking)
        {
            let mut roles = parse_roles(sig);
            roles.push(Role::Request);
            return Some(MpiFunction {
                class: CallClass::Collective,
                zone_boundary: false,
                roles: Some(roles),
            });
        }
    }
    let class = if short.starts_with("Type_") {
        CallClass::Datatype
    } else if [
        "Comm_",
        "Group_",
        "Cart_",
        "Graph_",
        "Dist_graph",
        "Intercomm_",
        "Topo_",
    ]
    .iter()
    .any(|p| short.starts_with(p))
    {
        CallClass::Communicator
    } else {
        CallClass::Other
    };
    Some(MpiFunction {
        class,
        zone_boundary: false,
        roles: None,
    })
}

/// Whether a call of this function with a wildcard completes any one of
/// several requests (`Waitany`, `Testany`, `Waitsome`, `Testsome`).
pub(crate) fn is_any_completion(name: &str) -> bool {
    matches!(
        base_name(name),
        Some("MPI_Waitany" | "MPI_Testany" | "MPI_Waitsome" | "MPI_Testsome")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_roles() {
        let recv = lookup("MPI_Recv").unwrap();
        assert_eq!(recv.class, CallClass::Receive);
        assert_eq!(recv.arg(Role::Source), Some(3));
        assert_eq!(recv.arg(Role::RecvTag), Some(4));
        assert_eq!(recv.arg(Role::Status), Some(6));
        let sr = lookup("PMPI_Sendrecv").unwrap();
        assert_eq!(sr.arg(Role::Source), Some(8));
        assert_eq!(sr.arg(Role::RecvTag), Some(9));
        assert!(lookup("MPI_Barrier").unwrap().zone_boundary);
        let ibarrier = lookup("MPI_Ibarrier").unwrap();
        assert_eq!(ibarrier.class, CallClass::Collective);
        assert!(!ibarrier.zone_boundary);
        assert_eq!(ibarrier.roles.unwrap().len(), 2);
        assert!(!lookup("MPI_Irecv").unwrap().zone_boundary);
        assert_eq!(
            lookup("MPI_Type_commit").unwrap().class,
            CallClass::Datatype
        );
        assert_eq!(
            lookup("MPI_Group_incl").unwrap().class,
            CallClass::Communicator
        );
        let unknown = lookup("MPI_Win_fence").unwrap();
        assert!(unknown.is_input(3) && unknown.is_output(3));
        assert!(lookup("printf").is_none());
        assert!(is_any_completion("PMPI_Waitsome"));
        assert!(!is_any_completion("MPI_Waitall"));
        assert_eq!(base_name("PMPI_Send"), Some("MPI_Send"));
        assert_eq!(base_name("PMPIX_Send"), None);
    }

    /// `(buffer, count, datatype)` of each buffer argument.
    fn buffers(name: &str) -> Vec<(usize, Option<usize>, usize)> {
        lookup(name)
            .unwrap()
            .buffers()
            .into_iter()
            .map(|b| (b.buffer, b.count, b.datatype))
            .collect()
    }

    #[test]
    fn buffers_pair_with_their_count_and_datatype() {
        assert_eq!(buffers("MPI_Send"), [(0, Some(1), 2)]);
        assert_eq!(buffers("MPI_Sendrecv"), [(0, Some(1), 2), (5, Some(6), 7)]);
        assert_eq!(buffers("MPI_Reduce"), [(0, Some(2), 3), (1, Some(2), 3)]);
        assert_eq!(buffers("MPI_Igather"), [(0, Some(1), 2), (3, Some(4), 5)]);
        // An array of counts is no count; the datatype still is one.
        assert_eq!(buffers("MPI_Scatterv"), [(0, None, 3), (4, Some(5), 6)]);
        assert_eq!(buffers("MPI_Allgatherv"), [(0, Some(1), 2), (3, None, 6)]);
        // Arrays of datatypes: nothing to check.
        assert_eq!(buffers("MPI_Alltoallw"), []);
        assert_eq!(buffers("MPI_Win_fence"), []);
        let bcast = lookup("MPI_Bcast").unwrap().buffers();
        assert_eq!(bcast[0].role, Role::InOutBuf);
        assert!(lookup("MPI_Send").unwrap().is_input(2));
    }
}
