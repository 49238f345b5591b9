//! C as gcc accepts it: the clang 16 errors that gcc 12 only warns about.
//!
//! `mpicc` runs gcc (12 on Debian 12), and old MPI codes build with it
//! while clang 16 refuses them: clang 16 made several diagnostics errors by
//! default that gcc 12 reports as warnings and compiles through. `build`
//! compiles C with the `-Wno-error=GROUP` flags below, so such a program
//! builds as it does with `mpicc`, and clang's warnings are still printed.
//!
//! The list is every warning of clang 16.0.6 whose default severity is
//! "error" (`diag::Severity::Error` in the `Diagnostic*Kinds.inc` tables
//! that `libclang-16-dev` installs) that can occur in C and that gcc 12.2
//! only warns about, each checked by compiling a file with both:
//!
//! | group | clang 16 error | gcc 12 warning |
//! | --- | --- | --- |
//! | `implicit-function-declaration` | call to undeclared function 'time'; call to undeclared library function 'memset'; use of unknown builtin | implicit declaration of function 'time' |
//! | `implicit-int` | type specifier missing, defaults to 'int'; parameter 'a' was not declared | type defaults to 'int'; return type defaults to 'int' |
//! | `int-conversion` | incompatible pointer to integer conversion initializing 'MPI_Comm' (aka 'int') with 'void *' | initialization of 'MPI_Comm' from 'void *' makes integer from pointer without a cast |
//! | `incompatible-function-pointer-types` | incompatible function pointer types initializing 'cb' with 'void (double)' | initialization from incompatible pointer type \[-Wincompatible-pointer-types\] |
//! | `return-type` | non-void function 'f' should return a value; void function 'g' should not return a value | 'return' with no value, in function returning non-void; 'return' with a value, in function returning void |
//! | `atomic-access` | accessing a member of an atomic structure or union is undefined behavior | accessing a member 'x' of an atomic structure 's' |
//!
//! The other default errors of clang 16 stay errors: `vec-elem-size` (gcc
//! rejects the same vector operands), `argument-outside-range` (gcc
//! rejects most out-of-range intrinsic immediates too, and one it takes
//! would not compile to what gcc makes of it), and groups that do not
//! apply to C on Linux (C++ narrowing, non-POD varargs, nullability,
//! modules, `ms_struct`, iOS targets, MS token pasting).

/// The clang warning groups that clang 16 makes errors by default and gcc
/// 12 only warns about, in C (see the module documentation for the
/// evidence).
pub(crate) const GCC_WARNS_CLANG_REFUSES: &[&str] = &[
    "implicit-function-declaration",
    "implicit-int",
    "int-conversion",
    "incompatible-function-pointer-types",
    "return-type",
    "atomic-access",
];

/// The flags that turn [`GCC_WARNS_CLANG_REFUSES`] back into warnings for
/// a C source compiled with the user's flags `user_flags`, to be put
/// *before* them: a later `-Werror=GROUP` of the user's then makes its
/// group an error again (clang takes the last word on one group), as does
/// `-pedantic-errors` wherever it stands.
///
/// None when the user's flags ask for `-Werror` (the last of `-Werror` and
/// `-Wno-error`): clang lets a group's `-Wno-error=GROUP` win over a
/// plain `-Werror` wherever they stand, so keeping the flags would quietly
/// weaken the user's `-Werror`, under which gcc refuses all of these too.
/// None as well when a `-x` (`--language`) of the user's compiles the
/// source as something other than C: in C++ these diagnostics are errors
/// for g++ as well.
pub(crate) fn c_flags(user_flags: &[String]) -> Vec<String> {
    if wants_werror(user_flags) || !language_is_c(user_flags) {
        return Vec::new();
    }
    GCC_WARNS_CLANG_REFUSES
        .iter()
        .map(|group| format!("-Wno-error={group}"))
        .collect()
}

/// Whether the last of `-Werror` and `-Wno-error` in `flags` is `-Werror`.
fn wants_werror(flags: &[String]) -> bool {
    flags
        .iter()
        .rev()
        .find_map(|f| match f.as_str() {
            "-Werror" => Some(true),
            "-Wno-error" => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// Whether a source named after `flags` is compiled as C by its extension
/// (`.c`): no `-x`, or a last `-x` of `c`, `cpp-output` (preprocessed C)
/// or `none` (back to the extension).
fn language_is_c(flags: &[String]) -> bool {
    let mut language = None;
    let mut words = flags.iter();
    while let Some(word) = words.next() {
        let value = match word.as_str() {
            "-x" | "--language" => words.next().map(String::as_str),
            w => w
                .strip_prefix("--language=")
                .or_else(|| w.strip_prefix("-x")),
        };
        if let Some(value) = value {
            language = Some(value);
        }
    }
    matches!(language, None | Some("c" | "cpp-output" | "none"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn every_group_is_downgraded_by_default() {
        let flags = c_flags(&strings(&["-O1", "-DN=4"]));
        assert_eq!(flags.len(), GCC_WARNS_CLANG_REFUSES.len());
        assert!(flags.contains(&"-Wno-error=implicit-function-declaration".to_string()));
        assert!(flags.contains(&"-Wno-error=int-conversion".to_string()));
    }

    #[test]
    fn a_user_werror_keeps_every_error() {
        assert!(c_flags(&strings(&["-Wall", "-Werror"])).is_empty());
        // The last word counts, as for clang.
        assert!(!c_flags(&strings(&["-Werror", "-Wno-error"])).is_empty());
        assert!(c_flags(&strings(&["-Wno-error", "-Werror"])).is_empty());
        // `-Werror=GROUP` is left to the order (see `compile_command`).
        assert!(!c_flags(&strings(&["-Werror=int-conversion"])).is_empty());
    }

    #[test]
    fn only_c_is_downgraded() {
        for cxx in [
            &["-x", "c++"][..],
            &["-xc++"],
            &["--language=c++"],
            &["--language", "c++"],
            &["-x", "c", "-x", "c++"],
        ] {
            assert!(c_flags(&strings(cxx)).is_empty(), "{cxx:?}");
        }
        for c in [
            &["-x", "c"][..],
            &["-xc"],
            &["-x", "c++", "-x", "none"],
            &["-x", "cpp-output"],
        ] {
            assert!(!c_flags(&strings(c)).is_empty(), "{c:?}");
        }
    }
}
