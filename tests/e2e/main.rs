//! End-to-end tests: C programs built and verified through the real
//! `mbhybrid` binary on real MPICH. One test binary; every test that starts
//! an MPI job holds `mpi_lock()`.

mod apps;
mod arguments;
mod bad_input;
mod barriers;
mod buffering;
mod choices;
mod collectives;
mod completeness;
mod cxx_names;
mod deterministic;
mod differential;
mod divergence;
mod fault_injection;
mod faults;
mod gcc_c;
mod gcc_options;
mod generator;
mod hangs;
mod icoll;
mod jobs;
mod masquerade;
mod mpicc_builds;
mod mpich_values;
mod not_modelled;
mod oracle;
mod patch_paths;
mod programs;
mod reuse;
mod rma;
mod rooted_early;
mod run_folders;
mod scenarios;
mod slurm;
mod static_report;
mod stopping;
mod threads;
mod transparency;
mod unknown_lines;
mod util;
mod wildcards;
mod wrappers;
