//! The C types of variables, read from a module's debug metadata.
//!
//! LLVM 16's C API reaches a variable's `DIType` but cannot tell a pointer
//! from a typedef (no tag getter), nor `int` from `float` (no encoding
//! getter), nor walk to a derived type's base. So the metadata is read
//! from the module's text instead (`LLVMPrintModuleToString`, once per
//! module): every `!N = !DI…(…)` line is parsed into a [`Node`] keyed by
//! `N`. Variables are found the same way: the `k`-th `llvm.dbg.declare`
//! of the `i`-th defined function names its `DILocalVariable`, and a
//! global's `!dbg` attachment its `DIGlobalVariableExpression`.
//! [`crate::ir`] pairs those with the instructions it reads through the C
//! API, in the same order, and checks the names agree.
//!
//! Anything this reader does not understand becomes [`CType::Unknown`]:
//! the buffer check stays silent about it.

use std::collections::HashMap;
use std::path::PathBuf;

/// One metadata node, as far as types and variables go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// `!DIBasicType(name:, size:, encoding:)`.
    Basic {
        name: String,
        bits: u64,
        encoding: String,
    },
    /// `!DIDerivedType` (typedef, const, volatile, pointer, member, ...).
    Derived {
        tag: String,
        name: String,
        base: Option<u32>,
        bits: u64,
    },
    /// `!DICompositeType` (array, structure, union, class, enumeration).
    Composite {
        tag: String,
        base: Option<u32>,
        bits: Option<u64>,
        elements: Option<u32>,
    },
    /// `!DISubrange(count:)`; `None` for a variable length.
    Subrange { count: Option<u64> },
    /// `!{!1, !2}`.
    Tuple(Vec<Option<u32>>),
    /// `!DILocalVariable` or `!DIGlobalVariable`.
    Variable {
        name: String,
        file: Option<u32>,
        line: u32,
        ty: Option<u32>,
    },
    /// `!DIGlobalVariableExpression(var:)`.
    GlobalExpression { var: Option<u32> },
    /// `!DIFile(filename:, directory:)`.
    File { path: PathBuf },
    /// Anything else.
    Other,
}

/// A C type, resolved through typedefs and qualifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CType {
    /// A basic type or an enumeration.
    Scalar(Scalar),
    /// A pointer; the pointee is `None` for `void *` (or unknown).
    Pointer(Option<Box<CType>>),
    /// An array (of arrays, for more dimensions): the innermost element
    /// type and the whole array's size in bytes when it is fixed.
    Array {
        element: Box<CType>,
        bytes: Option<u64>,
    },
    /// A structure, union or class, with its size in bytes.
    Aggregate { bytes: Option<u64> },
    /// Anything else.
    Unknown,
}

/// What a scalar holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// Signed or unsigned integer, or an enumeration.
    Integer,
    /// `char`, `signed char`, `unsigned char`.
    Char,
    /// `_Bool`, `bool`.
    Bool,
    /// `float`, `double`, `long double`.
    Float,
    /// `_Complex`.
    Complex,
    /// Anything else (`char16_t`, fixed point, ...).
    Other,
}

/// A basic type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scalar {
    /// Its name as debug information spells it (`double`, `unsigned int`).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// What it holds.
    pub kind: ScalarKind,
}

impl CType {
    /// The size of an object of this type in bytes, when fixed.
    pub fn bytes(&self) -> Option<u64> {
        match self {
            CType::Scalar(s) => Some(s.size),
            CType::Pointer(_) => None,
            CType::Array { bytes, .. } | CType::Aggregate { bytes } => *bytes,
            CType::Unknown => None,
        }
    }

    /// The element type: the innermost element of an array, or the type
    /// itself.
    pub fn element(&self) -> &CType {
        match self {
            CType::Array { element, .. } => element.element(),
            other => other,
        }
    }
}

/// A variable's name, declaration and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Variable {
    pub name: String,
    /// The declaring file as the `DIFile` records it (directory joined with
    /// file name); empty when unknown.
    pub file: PathBuf,
    /// 0 when unknown.
    pub line: u32,
    pub ty: CType,
}

/// The debug metadata of one module.
#[derive(Debug, Default)]
pub(crate) struct DebugInfo {
    nodes: HashMap<u32, Node>,
    /// Per defined function, in module order: the variable node of each
    /// `llvm.dbg.declare`, in instruction order.
    declares: Vec<Vec<Option<u32>>>,
    /// Global variable name to its `!dbg` node.
    globals: HashMap<String, u32>,
}

/// How deep type resolution goes before giving up (typedef chains, arrays
/// of pointers to arrays).
const MAX_DEPTH: u32 = 32;

impl DebugInfo {
    /// Reads the textual IR of a module.
    pub fn parse(text: &str) -> DebugInfo {
        let mut info = DebugInfo::default();
        let mut in_function = false;
        for line in text.lines() {
            if line.starts_with("define ") {
                in_function = true;
                info.declares.push(Vec::new());
            } else if in_function {
                if line.starts_with('}') {
                    in_function = false;
                } else if let Some(rest) = line.split_once("@llvm.dbg.declare(").map(|p| p.1) {
                    if let Some(list) = info.declares.last_mut() {
                        list.push(first_node_ref(rest, "metadata !"));
                    }
                }
            } else if let Some((number, node)) = metadata_line(line) {
                info.nodes.insert(number, node);
            } else if let Some((name, node)) = global_line(line) {
                info.globals.insert(name, node);
            }
        }
        info
    }

    /// The variable nodes of the `llvm.dbg.declare` calls of defined
    /// function number `function`, in order.
    pub fn declares(&self, function: usize) -> &[Option<u32>] {
        self.declares.get(function).map_or(&[], Vec::as_slice)
    }

    /// The variable node of global `name`.
    pub fn global(&self, name: &str) -> Option<u32> {
        let node = *self.globals.get(name)?;
        match self.nodes.get(&node)? {
            Node::GlobalExpression { var } => *var,
            Node::Variable { .. } => Some(node),
            _ => None,
        }
    }

    /// Variable node `node`, resolved.
    pub fn variable(&self, node: u32) -> Option<Variable> {
        let Node::Variable {
            name,
            file,
            line,
            ty,
        } = self.nodes.get(&node)?
        else {
            return None;
        };
        let file = match file.and_then(|f| self.nodes.get(&f)) {
            Some(Node::File { path }) => path.clone(),
            _ => PathBuf::new(),
        };
        Some(Variable {
            name: name.clone(),
            file,
            line: *line,
            ty: self.ty(*ty, 0),
        })
    }

    /// Type node `node` (`None`: `void`), through typedefs and qualifiers.
    fn ty(&self, node: Option<u32>, depth: u32) -> CType {
        let Some(node) = node else {
            return CType::Unknown;
        };
        if depth > MAX_DEPTH {
            return CType::Unknown;
        }
        match self.nodes.get(&node) {
            Some(Node::Basic {
                name,
                bits,
                encoding,
            }) => CType::Scalar(Scalar {
                name: name.clone(),
                size: bits / 8,
                kind: scalar_kind(encoding),
            }),
            Some(Node::Derived { tag, base, .. }) => match tag.as_str() {
                "DW_TAG_typedef"
                | "DW_TAG_const_type"
                | "DW_TAG_volatile_type"
                | "DW_TAG_restrict_type"
                | "DW_TAG_atomic_type" => self.ty(*base, depth + 1),
                "DW_TAG_pointer_type"
                | "DW_TAG_reference_type"
                | "DW_TAG_rvalue_reference_type" => {
                    let pointee = self.ty(*base, depth + 1);
                    CType::Pointer((pointee != CType::Unknown).then(|| Box::new(pointee)))
                }
                _ => CType::Unknown,
            },
            Some(Node::Composite {
                tag,
                base,
                bits,
                elements,
            }) => self.composite(tag, *base, *bits, *elements, depth),
            _ => CType::Unknown,
        }
    }

    fn composite(
        &self,
        tag: &str,
        base: Option<u32>,
        bits: Option<u64>,
        elements: Option<u32>,
        depth: u32,
    ) -> CType {
        match tag {
            "DW_TAG_array_type" => {
                let element = self.ty(base, depth + 1);
                if element == CType::Unknown {
                    return CType::Unknown;
                }
                // A fixed array records its size; a variable-length one
                // has none, and counts that are not all numbers.
                let bytes = bits.filter(|b| *b > 0).map(|b| b / 8).or_else(|| {
                    let counts = self.subrange_counts(elements)?;
                    counts
                        .into_iter()
                        .try_fold(element.bytes()?, |acc, c| acc.checked_mul(c))
                });
                CType::Array {
                    element: Box::new(element),
                    bytes,
                }
            }
            "DW_TAG_enumeration_type" => match bits {
                Some(bits) => CType::Scalar(Scalar {
                    name: "enum".into(),
                    size: bits / 8,
                    kind: ScalarKind::Integer,
                }),
                None => CType::Unknown,
            },
            "DW_TAG_structure_type" | "DW_TAG_union_type" | "DW_TAG_class_type" => {
                CType::Aggregate {
                    bytes: bits.map(|b| b / 8),
                }
            }
            _ => CType::Unknown,
        }
    }

    /// The counts of the subranges in tuple `elements`, when all are known.
    fn subrange_counts(&self, elements: Option<u32>) -> Option<Vec<u64>> {
        let Node::Tuple(items) = self.nodes.get(&elements?)? else {
            return None;
        };
        items
            .iter()
            .map(|item| match self.nodes.get(&(*item)?)? {
                Node::Subrange { count } => *count,
                _ => None,
            })
            .collect()
    }
}

fn scalar_kind(encoding: &str) -> ScalarKind {
    match encoding {
        "DW_ATE_signed" | "DW_ATE_unsigned" => ScalarKind::Integer,
        "DW_ATE_signed_char" | "DW_ATE_unsigned_char" => ScalarKind::Char,
        "DW_ATE_boolean" => ScalarKind::Bool,
        "DW_ATE_float" => ScalarKind::Float,
        "DW_ATE_complex_float" => ScalarKind::Complex,
        _ => ScalarKind::Other,
    }
}

/// The number after the first `prefix` in `text` (`metadata !35`).
fn first_node_ref(text: &str, prefix: &str) -> Option<u32> {
    let (_, rest) = text.split_once(prefix)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A global variable's line: `@name = ... !dbg !N`.
fn global_line(line: &str) -> Option<(String, u32)> {
    let rest = line.strip_prefix('@')?;
    let (name, _) = rest.split_once(" = ")?;
    let name = name.trim_matches('"').to_owned();
    Some((name, first_node_ref(line, "!dbg !")?))
}

/// A metadata line: `!N = [distinct] !Kind(fields)` or `!N = !{...}`.
fn metadata_line(line: &str) -> Option<(u32, Node)> {
    let rest = line.strip_prefix('!')?;
    let (number, body) = rest.split_once(" = ")?;
    let number: u32 = number.parse().ok()?;
    let body = body.trim().trim_start_matches("distinct ").trim();
    if let Some(tuple) = body.strip_prefix("!{").and_then(|b| b.strip_suffix('}')) {
        let items = split_top(tuple)
            .into_iter()
            .map(|item| node_ref(item.trim()))
            .collect();
        return Some((number, Node::Tuple(items)));
    }
    let body = body.strip_prefix('!')?;
    let (kind, fields) = body.split_once('(')?;
    let fields = fields.strip_suffix(')')?;
    let fields: HashMap<&str, &str> = split_top(fields)
        .into_iter()
        .filter_map(|f| f.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    Some((number, node(kind, &fields)))
}

fn node(kind: &str, fields: &HashMap<&str, &str>) -> Node {
    let text = |k: &str| fields.get(k).map(|v| unquote(v)).unwrap_or_default();
    let number = |k: &str| fields.get(k).and_then(|v| v.parse::<u64>().ok());
    let reference = |k: &str| fields.get(k).and_then(|v| node_ref(v));
    match kind {
        "DIBasicType" => Node::Basic {
            name: text("name"),
            bits: number("size").unwrap_or(0),
            encoding: text("encoding"),
        },
        "DIDerivedType" => Node::Derived {
            tag: text("tag"),
            name: text("name"),
            base: reference("baseType"),
            bits: number("size").unwrap_or(0),
        },
        "DICompositeType" => Node::Composite {
            tag: text("tag"),
            base: reference("baseType"),
            bits: number("size"),
            elements: reference("elements"),
        },
        "DISubrange" => Node::Subrange {
            count: number("count"),
        },
        "DILocalVariable" | "DIGlobalVariable" => Node::Variable {
            name: text("name"),
            file: reference("file"),
            line: number("line").unwrap_or(0) as u32,
            ty: reference("type"),
        },
        "DIGlobalVariableExpression" => Node::GlobalExpression {
            var: reference("var"),
        },
        "DIFile" => {
            let (dir, name) = (text("directory"), text("filename"));
            Node::File {
                path: if name.is_empty() {
                    PathBuf::from(dir)
                } else {
                    PathBuf::from(dir).join(name)
                },
            }
        }
        _ => Node::Other,
    }
}

/// `!N` as `N`; `None` for `null` and anything else.
fn node_ref(text: &str) -> Option<u32> {
    text.strip_prefix('!')?.parse().ok()
}

/// A field value without its quotes, with LLVM's `\XX` escapes decoded.
fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_owned();
    };
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'\\')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` split at the commas outside quotes and brackets.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '{' | '[' if !quoted => depth += 1,
            ')' | '}' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clang 16's metadata for `typedef double real; double gbuf[100];
    /// int x; real r[10][10]; const unsigned long ul; struct pt p;
    /// double *hp; void *vp; int v[n];`, trimmed.
    const IR: &str = r#"
@gbuf = dso_local global [100 x double] zeroinitializer, align 16, !dbg !0
@"odd name" = global i32 0, !dbg !70

define dso_local i32 @main(i32 noundef %argc) #0 !dbg !24 {
  %4 = alloca i32, align 4
  call void @llvm.dbg.declare(metadata ptr %4, metadata !35, metadata !DIExpression()), !dbg !36
  call void @llvm.dbg.declare(metadata ptr %5, metadata !37, metadata !DIExpression()), !dbg !42
  ret i32 0
}

declare void @llvm.dbg.declare(metadata, metadata, metadata) #1

define internal void @other() !dbg !80 {
  call void @llvm.dbg.declare(metadata ptr %1, metadata !43, metadata !DIExpression(DW_OP_deref)), !dbg !36
  ret void
}

!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())
!1 = distinct !DIGlobalVariable(name: "gbuf", scope: !2, file: !3, line: 6, type: !12, isLocal: false, isDefinition: true)
!3 = !DIFile(filename: "t.c", directory: "/tmp/b\5Cx", checksumkind: CSK_MD5, checksum: "2d")
!5 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)
!8 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!12 = !DICompositeType(tag: DW_TAG_array_type, baseType: !13, size: 6400, elements: !14)
!13 = !DIBasicType(name: "double", size: 64, encoding: DW_ATE_float)
!14 = !{!15}
!15 = !DISubrange(count: 100)
!35 = !DILocalVariable(name: "x", scope: !24, file: !3, line: 8, type: !8)
!37 = !DILocalVariable(name: "r", scope: !24, file: !3, line: 9, type: !38)
!38 = !DICompositeType(tag: DW_TAG_array_type, baseType: !39, elements: !40)
!39 = !DIDerivedType(tag: DW_TAG_typedef, name: "real", file: !3, line: 3, baseType: !13)
!40 = !{!41, !41}
!41 = !DISubrange(count: 10)
!43 = !DILocalVariable(name: "ul", scope: !24, file: !3, line: 10, type: !44)
!44 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !45)
!45 = !DIBasicType(name: "unsigned long", size: 64, encoding: DW_ATE_unsigned)
!47 = !DILocalVariable(name: "p", scope: !24, file: !3, line: 11, type: !48)
!48 = distinct !DICompositeType(tag: DW_TAG_structure_type, name: "pt", file: !3, line: 4, size: 128, elements: !49)
!49 = !{!50}
!50 = !DIDerivedType(tag: DW_TAG_member, name: "a", scope: !48, file: !3, line: 4, baseType: !8, size: 32)
!53 = !DILocalVariable(name: "hp", scope: !24, file: !3, line: 12, type: !54)
!54 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !13, size: 64)
!57 = !DILocalVariable(name: "vp", scope: !24, file: !3, line: 13, type: !5)
!60 = !DILocalVariable(name: "v", scope: !24, file: !3, line: 14, type: !61)
!61 = !DICompositeType(tag: DW_TAG_array_type, baseType: !8, elements: !62)
!62 = !{!63}
!63 = !DISubrange(count: !64)
!70 = !DIGlobalVariableExpression(var: !71, expr: !DIExpression())
!71 = distinct !DIGlobalVariable(name: "odd, \22name\22", scope: !2, file: !3, line: 2, type: !8, isLocal: false, isDefinition: true)
"#;

    fn double() -> CType {
        CType::Scalar(Scalar {
            name: "double".into(),
            size: 8,
            kind: ScalarKind::Float,
        })
    }

    fn var(info: &DebugInfo, node: u32) -> Variable {
        info.variable(node).unwrap()
    }

    #[test]
    fn declares_are_listed_per_defined_function_in_order() {
        let info = DebugInfo::parse(IR);
        assert_eq!(info.declares(0), [Some(35), Some(37)]);
        assert_eq!(info.declares(1), [Some(43)]);
        assert!(info.declares(2).is_empty());
        assert_eq!(info.global("gbuf"), Some(1));
        assert_eq!(info.global("odd name"), Some(71));
        assert_eq!(var(&info, 71).name, "odd, \"name\"");
    }

    #[test]
    fn scalars_through_qualifiers_and_typedefs() {
        let info = DebugInfo::parse(IR);
        let x = var(&info, 35);
        assert_eq!((x.name.as_str(), x.line), ("x", 8));
        assert_eq!(x.file, PathBuf::from("/tmp/b\\x/t.c"));
        assert_eq!(x.ty.bytes(), Some(4));
        let ul = var(&info, 43).ty;
        assert!(matches!(&ul, CType::Scalar(s) if s.kind == ScalarKind::Integer && s.size == 8));
    }

    #[test]
    fn arrays_have_their_element_and_size() {
        let info = DebugInfo::parse(IR);
        let gbuf = var(&info, 1).ty;
        assert_eq!(gbuf.element(), &double());
        assert_eq!(gbuf.bytes(), Some(800));
        // Two dimensions without a recorded size: counted from subranges.
        let r = var(&info, 37).ty;
        assert_eq!(r.element(), &double());
        assert_eq!(r.bytes(), Some(800));
        // A variable-length array has no fixed size.
        let v = var(&info, 60).ty;
        assert_eq!(v.bytes(), None);
        assert!(matches!(v.element(), CType::Scalar(s) if s.name == "int"));
    }

    #[test]
    fn pointers_structs_and_void() {
        let info = DebugInfo::parse(IR);
        assert_eq!(var(&info, 53).ty, CType::Pointer(Some(Box::new(double()))));
        assert_eq!(var(&info, 57).ty, CType::Pointer(None));
        assert_eq!(var(&info, 47).ty, CType::Aggregate { bytes: Some(16) });
        assert!(info.variable(8).is_none());
        assert!(info.variable(999).is_none());
    }
}
