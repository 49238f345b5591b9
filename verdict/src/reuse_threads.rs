//! The words that name the two threads of a `buffer-reuse` found by an
//! access: a program's threads may compute while one of them
//! calls MPI (`MPI_THREAD_FUNNELED` and above), and a worker's store into
//! a buffer the main thread's pending send owns is a race between them.

use mbh_trace::check::{OperationThread, ReuseThreads};

/// The accessing and the starting thread, in words, when the runtime
/// recorded them and they differ (`None` otherwise: one thread needs no
/// naming). `pid` is the rank's process id, which Linux gives its main
/// thread as its thread id.
pub(crate) fn named(threads: ReuseThreads, pid: u32) -> Option<(String, String)> {
    if threads.access == 0 {
        return None;
    }
    let name = |id: i32| {
        if u32::try_from(id) == Ok(pid) {
            format!("the main thread (thread {id})")
        } else {
            format!("thread {id}")
        }
    };
    let started_by = match threads.operation {
        OperationThread::Unknown => return None,
        OperationThread::Id(id) if id == threads.access => return None,
        OperationThread::Id(id) => name(id),
        OperationThread::Other => "another thread".to_string(),
    };
    Some((name(threads.access), started_by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_and_the_main_thread_are_both_named() {
        let threads = ReuseThreads {
            access: 101,
            operation: OperationThread::Id(100),
        };
        assert_eq!(
            named(threads, 100),
            Some((
                "thread 101".to_string(),
                "the main thread (thread 100)".to_string()
            ))
        );
    }

    #[test]
    fn one_thread_or_no_record_names_none() {
        let same = ReuseThreads {
            access: 100,
            operation: OperationThread::Id(100),
        };
        assert_eq!(named(same, 100), None);
        assert_eq!(named(ReuseThreads::default(), 100), None);
        let unknown_start = ReuseThreads {
            access: 101,
            operation: OperationThread::Unknown,
        };
        assert_eq!(named(unknown_start, 100), None);
    }

    #[test]
    fn a_start_on_a_third_thread_is_another_thread() {
        let threads = ReuseThreads {
            access: 100,
            operation: OperationThread::Other,
        };
        assert_eq!(
            named(threads, 100),
            Some((
                "the main thread (thread 100)".to_string(),
                "another thread".to_string()
            ))
        );
    }
}
