//! Function names as people read them.
//!
//! Function names reach mbhybrid's output from two places: the symbols of
//! the LLVM IR that `mbh-static` analyses (the static report, the site
//! table) and the DWARF of the executable that the CLI reads at a crash or
//! an abort (a finding's location). For C++ both are the mangled linkage
//! names of the Itanium ABI (`_ZN2ns6reduceIiEEvPT_i`). Both go through
//! [`demangle`], so `mbhybrid analyze` and a finding name a function the
//! same way (`ns::reduce<int>(int*, int)`).

use std::borrow::Cow;

/// The name of function symbol `symbol` as its source spells it: a C++
/// name mangled for the Itanium ABI (what clang and gcc produce on Linux)
/// becomes its qualified name with template arguments and parameter types,
/// without the return type (`_ZN2ns6reduceIiEEvPT_i` becomes
/// `ns::reduce<int>(int*, int)`), the form `c++filt` prints minus the
/// return type that only templates carry. Any other name, and a mangled
/// one that does not parse, is returned as it is: C names are already
/// what the source says.
///
/// ```
/// use mbh_trace::demangle;
///
/// assert_eq!(demangle("_Z25comm_pattern_naive_reduceidib"),
///            "comm_pattern_naive_reduce(int, double, int, bool)");
/// assert_eq!(demangle("main"), "main");
/// ```
pub fn demangle(symbol: &str) -> Cow<'_, str> {
    // Only the `_Z` prefix marks an Itanium mangled name; parsing anything
    // else could turn a C identifier such as `St` into a "demangled" one.
    if !symbol.starts_with("_Z") {
        return Cow::Borrowed(symbol);
    }
    let options = cpp_demangle::DemangleOptions::new().no_return_type();
    match cpp_demangle::Symbol::new(symbol).map(|s| s.demangle(&options)) {
        Ok(Ok(name)) => Cow::Owned(name),
        _ => Cow::Borrowed(symbol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cxx_names_are_demangled() {
        // The name of issue 17, and what clang++-16 makes of
        // `namespace ns { template <typename T> void reduce(T *, int); }`.
        assert_eq!(
            demangle("_Z25comm_pattern_naive_reduceidib"),
            "comm_pattern_naive_reduce(int, double, int, bool)"
        );
        assert_eq!(
            demangle("_ZN2ns6reduceIiEEvPT_i"),
            "ns::reduce<int>(int*, int)"
        );
        // A member function and a constructor.
        assert_eq!(demangle("_ZN2ns4Ring4stepEv"), "ns::Ring::step()");
        assert_eq!(demangle("_ZN2ns4RingC2Ei"), "ns::Ring::Ring(int)");
        // LLVM's clone suffixes are kept readable.
        assert!(
            demangle("_ZN2ns6reduceIiEEvPT_i.cold").starts_with("ns::reduce<int>(int*, int)"),
            "{}",
            demangle("_ZN2ns6reduceIiEEvPT_i.cold")
        );
    }

    #[test]
    fn other_names_stay_as_they_are() {
        for name in ["main", "MPI_Recv", "St", "_start", "__libc_start_main", ""] {
            assert_eq!(demangle(name), name);
            assert!(matches!(demangle(name), Cow::Borrowed(_)));
        }
        // `_Z` followed by something that is not a mangled name.
        assert_eq!(demangle("_Zebra"), "_Zebra");
        assert_eq!(demangle("_Z"), "_Z");
    }
}
