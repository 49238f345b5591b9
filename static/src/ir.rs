//! A plain-data copy of the IR that the analyses need.
//!
//! LLVM values cannot cross threads, so each module is read once, on the
//! calling thread, into [`Function`]s made of indices and strings; the
//! analyses then run on those in parallel (rayon). The LLVM handles needed
//! to rewrite the module later are kept aside in [`FunctionRefs`], which
//! stay on the calling thread.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use inkwell::basic_block::BasicBlock;
use inkwell::values::InstructionValue;
use llvm_sys::core::*;
use llvm_sys::debuginfo::{
    LLVMDILocationGetColumn, LLVMDILocationGetLine, LLVMDILocationGetScope, LLVMDIScopeGetFile,
    LLVMGetMetadataKind, LLVMInstructionGetDebugLoc, LLVMMetadataKind,
};
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMMetadataRef, LLVMValueRef};
use llvm_sys::target::{LLVMABISizeOfType, LLVMGetModuleDataLayout, LLVMOffsetOfElement};
use llvm_sys::{LLVMIntPredicate, LLVMLinkage, LLVMOpcode, LLVMTypeKind};

use crate::dwarf::{CType, DebugInfo};
use crate::Module;

/// Index of an instruction in [`Function::insts`].
pub(crate) type InstId = u32;
/// Index of a block in [`Function::blocks`]; 0 is the entry.
pub(crate) type BlockId = u32;

/// An operand, as far as the analyses care.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Val {
    /// An instruction of the same function.
    Inst(InstId),
    /// The function's parameter number n.
    Arg(u32),
    /// An integer constant (also `inttoptr` of one).
    Int(i64),
    /// A global variable or function (possibly behind constant casts and
    /// constant GEPs), by name.
    Global(String),
    /// `null`.
    Null,
    /// Anything else (undef, floats, aggregates, metadata, blocks).
    Other,
}

/// What a call calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Callee {
    /// A named function.
    Named(String),
    /// Through a pointer.
    Indirect,
    /// Inline assembly.
    Asm,
}

/// The instruction kinds the analyses tell apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// `alloca`; the source variable's name when debug info gives it.
    Alloca(Option<String>),
    /// `load`: operands `[ptr]`.
    Load,
    /// `store`: operands `[value, ptr]`.
    Store,
    /// `getelementptr`: operands `[base, indices...]`; the constant part of
    /// the byte offset and, per variable index operand, its byte scale.
    Gep {
        /// Sum of the constant indices' byte offsets.
        offset: i64,
        /// `(operand index, bytes per unit)` of each non-constant index.
        var: Vec<(u32, u64)>,
    },
    /// `call`/`invoke`/`callbr`: operands are the arguments.
    Call(Callee),
    /// `br`: operands `[cond]` when conditional.
    Br,
    /// `switch`: operands `[cond]`.
    Switch,
    /// `indirectbr`: operands `[address]`.
    IndirectBr,
    /// `ret`: operands `[value]` when it returns one.
    Ret,
    /// `phi`: operands are the incoming values.
    Phi,
    /// `select`: operands `[cond, a, b]`.
    Select,
    /// An integer or pointer cast: operands `[value]`.
    Cast,
    /// An integer comparison (`icmp`): operands `[a, b]`.
    Compare(IntCmp),
    /// A bitwise `and` or `or` (on `i1`, the `&&` and `||` an optimizer
    /// folds two branches into): operands `[a, b]`.
    Logic(Logic),
    /// Arithmetic and everything else that computes a value from its
    /// operands.
    Compute,
    /// Terminators without a value to follow (`unreachable`, `resume`).
    Other,
}

/// An `icmp` predicate: `s` signed, `u` unsigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntCmp {
    Eq,
    Ne,
    Ugt,
    Uge,
    Ult,
    Ule,
    Sgt,
    Sge,
    Slt,
    Sle,
}

/// `and` or `or`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logic {
    And,
    Or,
}

/// The analyses' name of an `icmp` predicate.
fn int_cmp(p: LLVMIntPredicate) -> IntCmp {
    match p {
        LLVMIntPredicate::LLVMIntEQ => IntCmp::Eq,
        LLVMIntPredicate::LLVMIntNE => IntCmp::Ne,
        LLVMIntPredicate::LLVMIntUGT => IntCmp::Ugt,
        LLVMIntPredicate::LLVMIntUGE => IntCmp::Uge,
        LLVMIntPredicate::LLVMIntULT => IntCmp::Ult,
        LLVMIntPredicate::LLVMIntULE => IntCmp::Ule,
        LLVMIntPredicate::LLVMIntSGT => IntCmp::Sgt,
        LLVMIntPredicate::LLVMIntSGE => IntCmp::Sge,
        LLVMIntPredicate::LLVMIntSLT => IntCmp::Slt,
        LLVMIntPredicate::LLVMIntSLE => IntCmp::Sle,
    }
}

/// A source location, with the file interned in [`Files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Loc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
}

/// One instruction.
#[derive(Debug, Clone)]
pub(crate) struct Inst {
    pub op: Op,
    pub ops: Vec<Val>,
    pub loc: Option<Loc>,
    pub block: BlockId,
    /// Whether it produces a pointer.
    pub is_ptr: bool,
}

/// How a block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Term {
    Br,
    Switch,
    Ret,
    Unreachable,
    /// `invoke`, `callbr`, `indirectbr`, `resume`, exception pads: edges
    /// out of them cannot be split.
    Unsplittable,
}

/// One basic block.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    /// Its instructions are `first..end` in [`Function::insts`].
    pub first: InstId,
    pub end: InstId,
    /// Successors in terminator order (duplicates kept).
    pub succs: Vec<BlockId>,
    pub term: Term,
    /// It starts with a landing pad or another exception pad, so nothing
    /// can be inserted before its first instruction.
    pub pad: bool,
    /// That pad is a `landingpad` (the Itanium exception handling of Linux
    /// targets): a call may go right after it.
    pub landing_pad: bool,
    /// The start and end of the source loop whose back edge this block's
    /// terminator is, from its `!llvm.loop` metadata (clang `-g` writes it
    /// on every loop's latch).
    pub loop_loc: Option<(Loc, Option<Loc>)>,
}

/// A source variable an `alloca` or a global holds, from debug info.
#[derive(Debug, Clone)]
pub(crate) struct VarInfo {
    pub name: String,
    /// Where it is declared (column 0).
    pub decl: Option<Loc>,
    pub ty: CType,
}

/// One defined function.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub name: String,
    /// Index of its module among the analysed ones.
    pub module: usize,
    /// Local linkage (`static` in C): only its module can call it.
    pub internal: bool,
    pub blocks: Vec<Block>,
    pub insts: Vec<Inst>,
    /// The variables of its `alloca`s that `llvm.dbg.declare` describes.
    pub vars: HashMap<InstId, VarInfo>,
}

impl Function {
    /// The first located instruction of block `b`.
    pub fn block_loc(&self, b: BlockId) -> Option<Loc> {
        let block = &self.blocks[b as usize];
        (block.first..block.end).find_map(|i| self.insts[i as usize].loc)
    }

    /// The function's first located instruction.
    pub fn first_loc(&self) -> Option<Loc> {
        self.insts.iter().find_map(|i| i.loc)
    }

    /// Its name as the source spells it, demangled ([`mbh_trace::demangle`]):
    /// what reports show. `name`, the symbol, is what calls resolve by.
    pub fn shown_name(&self) -> std::borrow::Cow<'_, str> {
        mbh_trace::demangle(&self.name)
    }

    /// The callee name of instruction `i`, when it is a direct call.
    pub fn callee(&self, i: InstId) -> Option<&str> {
        match &self.insts[i as usize].op {
            Op::Call(Callee::Named(name)) => Some(name),
            _ => None,
        }
    }
}

/// The LLVM handles of one function, for rewriting it.
#[derive(Debug, Clone)]
pub(crate) struct FunctionRefs<'ctx> {
    pub blocks: Vec<BasicBlock<'ctx>>,
    pub insts: Vec<InstructionValue<'ctx>>,
}

/// File names, interned.
#[derive(Debug, Default)]
pub(crate) struct Files {
    pub paths: Vec<PathBuf>,
    index: HashMap<PathBuf, u32>,
}

impl Files {
    fn intern(&mut self, path: PathBuf) -> u32 {
        if let Some(&i) = self.index.get(&path) {
            return i;
        }
        let i = self.paths.len() as u32;
        self.paths.push(path.clone());
        self.index.insert(path, i);
        i
    }
}

/// What one module contributes.
pub(crate) struct ModuleIr<'ctx> {
    pub functions: Vec<Function>,
    pub refs: Vec<FunctionRefs<'ctx>>,
    /// Constant integer globals (`static const int src = MPI_ANY_SOURCE;`).
    pub const_globals: HashMap<String, Val>,
    /// Functions whose address appears in a global's initializer (tables
    /// of function pointers): they may be called from anywhere.
    pub referenced: HashSet<String>,
    /// Global variables described by debug info, by IR name.
    pub globals: HashMap<String, VarInfo>,
    /// Constant C strings (`@.str = "DEBUG\0"`), by IR name, without the
    /// terminating NUL: what `getenv("DEBUG")` names.
    pub strings: HashMap<String, String>,
}

/// Reads every defined function of `module` (module number `index`).
pub(crate) fn read_module<'ctx>(
    module: &Module<'ctx>,
    index: usize,
    files: &mut Files,
) -> ModuleIr<'ctx> {
    let raw = module.llvm().as_mut_ptr();
    let debug = DebugInfo::parse(&module.llvm().print_to_string().to_string_lossy());
    let mut reader = Reader {
        debug: &debug,
        files,
        file_cache: HashMap::new(),
        // SAFETY: the module is live; its data layout is owned by it and
        // outlives this reader.
        layout: unsafe { LLVMGetModuleDataLayout(raw) },
        // SAFETY: the module's context is live.
        loop_kind: unsafe {
            let name = "llvm.loop";
            LLVMGetMDKindIDInContext(
                LLVMGetModuleContext(raw),
                name.as_ptr().cast(),
                name.len() as u32,
            )
        },
    };
    let mut functions = Vec::new();
    let mut refs = Vec::new();
    let mut const_globals = HashMap::new();
    let mut referenced = HashSet::new();
    let mut globals = HashMap::new();
    let mut strings = HashMap::new();
    // SAFETY: every LLVM reference below comes from walking this live
    // module's lists; values are only read.
    unsafe {
        let mut g = LLVMGetFirstGlobal(raw);
        while !g.is_null() {
            if LLVMIsGlobalConstant(g) != 0 && LLVMIsDeclaration(g) == 0 {
                let init = LLVMGetInitializer(g);
                if !init.is_null() {
                    let v = const_val(init);
                    if matches!(v, Val::Int(_) | Val::Global(_) | Val::Null) {
                        const_globals.insert(value_name(g), v);
                    }
                    if let Some(text) = c_string(init) {
                        strings.insert(value_name(g), text);
                    }
                }
            }
            if LLVMIsDeclaration(g) == 0 {
                let init = LLVMGetInitializer(g);
                if !init.is_null() {
                    functions_in(init, &mut referenced);
                }
                let name = value_name(g);
                if let Some(var) = debug.global(&name).and_then(|n| reader.var_info(n)) {
                    globals.insert(name, var);
                }
            }
            g = LLVMGetNextGlobal(g);
        }
        let mut f = LLVMGetFirstFunction(raw);
        while !f.is_null() {
            if LLVMIsDeclaration(f) == 0 {
                let (function, function_refs) = reader.function(f, index, functions.len());
                functions.push(function);
                refs.push(function_refs);
            }
            f = LLVMGetNextFunction(f);
        }
    }
    ModuleIr {
        functions,
        refs,
        const_globals,
        referenced,
        globals,
        strings,
    }
}

/// The text of a constant C string (an `i8` array ending in NUL).
///
/// # Safety
/// `c` must be a live constant.
unsafe fn c_string(c: LLVMValueRef) -> Option<String> {
    // SAFETY: per this function's contract; LLVMGetAsString is only called
    // on a constant data sequential that LLVM says is a string, and the
    // bytes are copied at once.
    unsafe {
        if LLVMIsAConstantDataSequential(c).is_null() || LLVMIsConstantString(c) == 0 {
            return None;
        }
        let mut len = 0usize;
        let ptr = LLVMGetAsString(c, &mut len);
        if ptr.is_null() {
            return None;
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        Some(String::from_utf8_lossy(text).into_owned())
    }
}

/// Adds the names of the functions constant `c` refers to.
///
/// # Safety
/// `c` must be a live constant.
unsafe fn functions_in(c: LLVMValueRef, out: &mut HashSet<String>) {
    let mut stack = vec![c];
    let mut budget = 100_000;
    // SAFETY: per this function's contract; operands of constants are
    // constants.
    unsafe {
        while let Some(v) = stack.pop() {
            budget -= 1;
            if v.is_null() || budget == 0 {
                continue;
            }
            if !LLVMIsAFunction(v).is_null() || !LLVMIsAGlobalAlias(v).is_null() {
                out.insert(value_name(v));
                continue;
            }
            if !LLVMIsAGlobalValue(v).is_null() || LLVMIsAConstant(v).is_null() {
                continue;
            }
            let n = LLVMGetNumOperands(v);
            for k in 0..n.max(0) as u32 {
                stack.push(LLVMGetOperand(v, k));
            }
        }
    }
}

struct Reader<'a> {
    debug: &'a DebugInfo,
    files: &'a mut Files,
    file_cache: HashMap<LLVMMetadataRef, u32>,
    layout: llvm_sys::target::LLVMTargetDataRef,
    /// The metadata kind id of `llvm.loop`.
    loop_kind: u32,
}

impl Reader<'_> {
    /// Variable node `node` of the module's debug info, its file interned.
    fn var_info(&mut self, node: u32) -> Option<VarInfo> {
        let var = self.debug.variable(node)?;
        let decl = (var.line > 0).then(|| Loc {
            file: self.files.intern(var.file),
            line: var.line,
            column: 0,
        });
        Some(VarInfo {
            name: var.name,
            decl,
            ty: var.ty,
        })
    }

    /// The variables of `declares` (each `llvm.dbg.declare` of defined
    /// function number `ordinal`, in order: its alloca and variable name),
    /// paired with the debug info's list for that function. Nothing when
    /// the two disagree (a count or a name), rather than a wrong pairing.
    fn declared_vars(
        &mut self,
        ordinal: usize,
        declares: &[Option<(InstId, String)>],
    ) -> HashMap<InstId, VarInfo> {
        let nodes = self.debug.declares(ordinal).to_vec();
        let mut vars = HashMap::new();
        if nodes.len() != declares.len() {
            return vars;
        }
        for (declare, node) in declares.iter().zip(nodes) {
            let (Some((alloca, name)), Some(node)) = (declare, node) else {
                continue;
            };
            match self.var_info(node) {
                Some(var) if var.name == *name => {
                    vars.insert(*alloca, var);
                }
                _ => return HashMap::new(),
            }
        }
        vars
    }

    /// Reads function `f` into plain data, and keeps its LLVM handles for
    /// rewriting it: numbers its blocks and instructions, reads each block
    /// ([`Reader::block`]), then names its `alloca`s and pairs them with
    /// the variables debug information describes.
    ///
    /// # Safety
    /// `f` must be a live function definition, defined function number
    /// `ordinal` of its module.
    unsafe fn function<'ctx>(
        &mut self,
        f: LLVMValueRef,
        module: usize,
        ordinal: usize,
    ) -> (Function, FunctionRefs<'ctx>) {
        // SAFETY: per this function's contract, and everything read is
        // reached from `f`.
        unsafe {
            let linkage = LLVMGetLinkage(f);
            let internal = matches!(
                linkage,
                LLVMLinkage::LLVMInternalLinkage | LLVMLinkage::LLVMPrivateLinkage
            );
            let numbering = Numbering::of(f);
            let raw_insts = &numbering.raw_insts;

            let mut blocks = Vec::with_capacity(numbering.raw_blocks.len());
            let mut insts = Vec::with_capacity(raw_insts.len());
            let mut declares: Vec<Option<(InstId, String)>> = Vec::new();
            for (bi, &b) in numbering.raw_blocks.iter().enumerate() {
                let block = self.block(&numbering, bi as BlockId, b, &mut insts, &mut declares);
                blocks.push(block);
            }
            for (a, name) in declares.iter().flatten() {
                if let Op::Alloca(slot) = &mut insts[*a as usize].op {
                    slot.get_or_insert(name.clone());
                }
            }
            let vars = self.declared_vars(ordinal, &declares);
            // Value names (kept by `-fno-discard-value-names`) name allocas
            // that debug info does not.
            for (k, &raw) in raw_insts.iter().enumerate() {
                if let Op::Alloca(slot @ None) = &mut insts[k].op {
                    let name = value_name(raw);
                    if !name.is_empty() && !name.chars().all(|c| c.is_ascii_digit()) {
                        *slot = Some(name.trim_end_matches(".addr").to_owned());
                    }
                }
            }
            let function = Function {
                name: value_name(f),
                module,
                internal,
                blocks,
                insts,
                vars,
            };
            let refs = FunctionRefs {
                blocks: inkwell::values::FunctionValue::new(f)
                    .map(|fv| fv.get_basic_blocks())
                    .unwrap_or_default(),
                insts: raw_insts
                    .iter()
                    .map(|&i| InstructionValue::new(i))
                    .collect(),
            };
            (function, refs)
        }
    }

    /// Reads block `b`, number `bi` of its function: appends its
    /// instructions to `insts` (each [`Reader::instruction`]) and the
    /// `llvm.dbg.declare`s among them to `declares`, and returns how it
    /// ends and where it goes from its terminator.
    ///
    /// # Safety
    /// `b` must be a live block of the function `numbering` numbers.
    unsafe fn block(
        &mut self,
        numbering: &Numbering,
        bi: BlockId,
        b: LLVMBasicBlockRef,
        insts: &mut Vec<Inst>,
        declares: &mut Vec<Option<(InstId, String)>>,
    ) -> Block {
        // SAFETY: per this function's contract; every instruction read is
        // one of `b`'s.
        unsafe {
            let first = insts.len() as InstId;
            let mut i = LLVMGetFirstInstruction(b);
            let mut pad = false;
            let mut landing_pad = false;
            let mut term = Term::Unsplittable;
            let mut succs = Vec::new();
            let mut loop_loc = None;
            while !i.is_null() {
                let opcode = LLVMGetInstructionOpcode(i);
                landing_pad |= opcode == LLVMOpcode::LLVMLandingPad;
                let (op, ops) = self.instruction(numbering, i, opcode, declares, &mut pad);
                if LLVMIsATerminatorInst(i).is_null() {
                    // Not a terminator.
                } else {
                    term = match opcode {
                        LLVMOpcode::LLVMBr => Term::Br,
                        LLVMOpcode::LLVMSwitch => Term::Switch,
                        LLVMOpcode::LLVMRet => Term::Ret,
                        LLVMOpcode::LLVMUnreachable => Term::Unreachable,
                        _ => Term::Unsplittable,
                    };
                    loop_loc = self.loop_location(i);
                    let ns = LLVMGetNumSuccessors(i);
                    succs = (0..ns)
                        .filter_map(|k| numbering.block_index.get(&LLVMGetSuccessor(i, k)).copied())
                        .collect();
                }
                let is_ptr = {
                    let ty = LLVMTypeOf(i);
                    !ty.is_null() && LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind
                };
                insts.push(Inst {
                    op,
                    ops,
                    loc: self.location(i),
                    block: bi,
                    is_ptr,
                });
                i = LLVMGetNextInstruction(i);
            }
            Block {
                first,
                end: insts.len() as InstId,
                succs,
                term,
                pad,
                landing_pad,
                loop_loc,
            }
        }
    }

    /// What instruction `i` (of opcode `opcode`) is to the analyses, and
    /// the operands they follow. A call to `llvm.dbg.declare` is noted in
    /// `declares` (its alloca and variable name), and an exception pad
    /// sets `pad`.
    ///
    /// # Safety
    /// `i` must be a live instruction of the function `numbering` numbers.
    unsafe fn instruction(
        &self,
        numbering: &Numbering,
        i: LLVMValueRef,
        opcode: LLVMOpcode,
        declares: &mut Vec<Option<(InstId, String)>>,
        pad: &mut bool,
    ) -> (Op, Vec<Val>) {
        let operand = |v: LLVMValueRef| -> Val {
            // SAFETY: operands of a live instruction are live values.
            unsafe { numbering.operand(v) }
        };
        // SAFETY: per this function's contract; operand indices are below
        // the counts LLVM gives.
        unsafe {
            let n = LLVMGetNumOperands(i).max(0) as u32;
            let all_ops = || (0..n).map(|k| operand(LLVMGetOperand(i, k))).collect();
            match opcode {
                LLVMOpcode::LLVMAlloca => (Op::Alloca(None), Vec::new()),
                LLVMOpcode::LLVMLoad => (Op::Load, all_ops()),
                LLVMOpcode::LLVMStore => (Op::Store, all_ops()),
                LLVMOpcode::LLVMGetElementPtr => {
                    let (offset, var) = self.gep_offsets(i);
                    (Op::Gep { offset, var }, all_ops())
                }
                LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMCallBr => {
                    let nargs = LLVMGetNumArgOperands(i);
                    let args = (0..nargs).map(|k| operand(LLVMGetOperand(i, k))).collect();
                    let callee = callee(i);
                    if let Callee::Named(name) = &callee {
                        if name == "llvm.dbg.declare" {
                            declares.push(dbg_declare(i).and_then(|(alloca, var)| {
                                Some((*numbering.inst_index.get(&alloca)?, var))
                            }));
                        }
                    }
                    (Op::Call(callee), args)
                }
                LLVMOpcode::LLVMBr => {
                    let ops = if LLVMIsConditional(i) != 0 {
                        vec![operand(LLVMGetCondition(i))]
                    } else {
                        Vec::new()
                    };
                    (Op::Br, ops)
                }
                LLVMOpcode::LLVMSwitch => (Op::Switch, vec![operand(LLVMGetOperand(i, 0))]),
                LLVMOpcode::LLVMIndirectBr => (Op::IndirectBr, vec![operand(LLVMGetOperand(i, 0))]),
                LLVMOpcode::LLVMRet => (Op::Ret, all_ops()),
                LLVMOpcode::LLVMPHI => (Op::Phi, all_ops()),
                LLVMOpcode::LLVMSelect => (Op::Select, all_ops()),
                LLVMOpcode::LLVMTrunc
                | LLVMOpcode::LLVMZExt
                | LLVMOpcode::LLVMSExt
                | LLVMOpcode::LLVMBitCast
                | LLVMOpcode::LLVMIntToPtr
                | LLVMOpcode::LLVMPtrToInt
                | LLVMOpcode::LLVMAddrSpaceCast
                | LLVMOpcode::LLVMFreeze => (Op::Cast, all_ops()),
                LLVMOpcode::LLVMICmp => (Op::Compare(int_cmp(LLVMGetICmpPredicate(i))), all_ops()),
                LLVMOpcode::LLVMAnd => (Op::Logic(Logic::And), all_ops()),
                LLVMOpcode::LLVMOr => (Op::Logic(Logic::Or), all_ops()),
                LLVMOpcode::LLVMUnreachable | LLVMOpcode::LLVMResume => (Op::Other, Vec::new()),
                LLVMOpcode::LLVMLandingPad
                | LLVMOpcode::LLVMCleanupPad
                | LLVMOpcode::LLVMCatchPad
                | LLVMOpcode::LLVMCatchSwitch => {
                    *pad = true;
                    (Op::Other, Vec::new())
                }
                _ => (Op::Compute, all_ops()),
            }
        }
    }

    /// The constant byte offset of a GEP and the byte scale of each of its
    /// non-constant indices.
    ///
    /// # Safety
    /// `gep` must be a live `getelementptr` instruction.
    unsafe fn gep_offsets(&self, gep: LLVMValueRef) -> (i64, Vec<(u32, u64)>) {
        let mut offset = 0i64;
        let mut var = Vec::new();
        // SAFETY: per this function's contract; types come from the GEP.
        unsafe {
            let mut ty = LLVMGetGEPSourceElementType(gep);
            let n = LLVMGetNumOperands(gep).max(0) as u32;
            for k in 1..n {
                let index = LLVMGetOperand(gep, k);
                let constant =
                    (!LLVMIsAConstantInt(index).is_null()).then(|| LLVMConstIntGetSExtValue(index));
                if k == 1 {
                    let size = LLVMABISizeOfType(self.layout, ty);
                    match constant {
                        Some(c) => offset = offset.wrapping_add(c.wrapping_mul(size as i64)),
                        None => var.push((k, size)),
                    }
                    continue;
                }
                match LLVMGetTypeKind(ty) {
                    LLVMTypeKind::LLVMStructTypeKind => {
                        let field = constant.unwrap_or(0).max(0) as u32;
                        offset =
                            offset.wrapping_add(LLVMOffsetOfElement(self.layout, ty, field) as i64);
                        ty = LLVMStructGetTypeAtIndex(ty, field);
                    }
                    LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
                        ty = LLVMGetElementType(ty);
                        let size = LLVMABISizeOfType(self.layout, ty);
                        match constant {
                            Some(c) => offset = offset.wrapping_add(c.wrapping_mul(size as i64)),
                            None => var.push((k, size)),
                        }
                    }
                    _ => {
                        var.push((k, 1));
                    }
                }
                if ty.is_null() {
                    break;
                }
            }
        }
        (offset, var)
    }

    /// The start and end locations in terminator `term`'s `!llvm.loop`.
    ///
    /// # Safety
    /// `term` must be a live terminator.
    unsafe fn loop_location(&mut self, term: LLVMValueRef) -> Option<(Loc, Option<Loc>)> {
        // SAFETY: LLVMGetMetadata returns null or the loop id node as a
        // value; its operands are metadata, checked for their kind before
        // being read as DILocations.
        unsafe {
            let node = LLVMGetMetadata(term, self.loop_kind);
            if node.is_null() || LLVMIsAMDNode(node).is_null() {
                return None;
            }
            let n = LLVMGetMDNodeNumOperands(node) as usize;
            let mut ops = vec![std::ptr::null_mut(); n];
            LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
            let mut locs = ops.into_iter().skip(1).filter_map(|op| {
                if op.is_null() {
                    return None;
                }
                let md = LLVMValueAsMetadata(op);
                matches!(
                    LLVMGetMetadataKind(md),
                    LLVMMetadataKind::LLVMDILocationMetadataKind
                )
                .then(|| self.di_location(md))
                .flatten()
            });
            let start = locs.next()?;
            Some((start, locs.next()))
        }
    }

    /// # Safety
    /// `inst` must be a live instruction.
    unsafe fn location(&mut self, inst: LLVMValueRef) -> Option<Loc> {
        // SAFETY: per this function's contract.
        unsafe { self.di_location(LLVMInstructionGetDebugLoc(inst)) }
    }

    /// # Safety
    /// `loc` must be null or a live DILocation.
    unsafe fn di_location(&mut self, loc: LLVMMetadataRef) -> Option<Loc> {
        // SAFETY: as in `debug_loc::location`.
        unsafe {
            if loc.is_null() {
                return None;
            }
            let line = LLVMDILocationGetLine(loc);
            let column = LLVMDILocationGetColumn(loc);
            let scope = LLVMDILocationGetScope(loc);
            let file_md = if scope.is_null() {
                std::ptr::null_mut()
            } else {
                LLVMDIScopeGetFile(scope)
            };
            let file = match self.file_cache.get(&file_md) {
                Some(&f) => f,
                None => {
                    let path = crate::debug_loc::file_path(file_md);
                    let f = self.files.intern(path);
                    self.file_cache.insert(file_md, f);
                    f
                }
            };
            Some(Loc { file, line, column })
        }
    }
}

/// The blocks, instructions and parameters of one function, numbered in
/// order: what a [`Val`] names them by.
struct Numbering {
    block_index: HashMap<LLVMBasicBlockRef, BlockId>,
    raw_blocks: Vec<LLVMBasicBlockRef>,
    inst_index: HashMap<LLVMValueRef, InstId>,
    raw_insts: Vec<LLVMValueRef>,
    params: HashMap<LLVMValueRef, u32>,
}

impl Numbering {
    /// # Safety
    /// `f` must be a live function definition.
    unsafe fn of(f: LLVMValueRef) -> Self {
        // SAFETY: per this function's contract; blocks, instructions and
        // parameters are walked from `f`.
        unsafe {
            let mut block_index: HashMap<LLVMBasicBlockRef, BlockId> = HashMap::new();
            let mut raw_blocks = Vec::new();
            let mut b = LLVMGetFirstBasicBlock(f);
            while !b.is_null() {
                block_index.insert(b, raw_blocks.len() as BlockId);
                raw_blocks.push(b);
                b = LLVMGetNextBasicBlock(b);
            }
            let mut inst_index: HashMap<LLVMValueRef, InstId> = HashMap::new();
            let mut raw_insts = Vec::new();
            for &b in &raw_blocks {
                let mut i = LLVMGetFirstInstruction(b);
                while !i.is_null() {
                    inst_index.insert(i, raw_insts.len() as InstId);
                    raw_insts.push(i);
                    i = LLVMGetNextInstruction(i);
                }
            }
            let nparams = LLVMCountParams(f);
            let params: HashMap<LLVMValueRef, u32> =
                (0..nparams).map(|p| (LLVMGetParam(f, p), p)).collect();
            Numbering {
                block_index,
                raw_blocks,
                inst_index,
                raw_insts,
                params,
            }
        }
    }

    /// Operand `v` of one of the function's instructions: another of its
    /// instructions, one of its parameters, or a constant.
    ///
    /// # Safety
    /// `v` must be a live value.
    unsafe fn operand(&self, v: LLVMValueRef) -> Val {
        if let Some(&i) = self.inst_index.get(&v) {
            Val::Inst(i)
        } else if let Some(&p) = self.params.get(&v) {
            Val::Arg(p)
        } else {
            // SAFETY: per this function's contract.
            unsafe { const_val(v) }
        }
    }
}

/// What call `inst` calls.
///
/// # Safety
/// `inst` must be a live call site.
unsafe fn callee(inst: LLVMValueRef) -> Callee {
    // SAFETY: per this function's contract.
    let called = unsafe { InstructionValue::new(inst) };
    match crate::debug_loc::callee(called) {
        crate::debug_loc::Callee::Named(name) => Callee::Named(name),
        crate::debug_loc::Callee::Indirect => Callee::Indirect,
        crate::debug_loc::Callee::InlineAsm => Callee::Asm,
    }
}

/// The alloca and variable name of a `llvm.dbg.declare` call.
///
/// # Safety
/// `call` must be a live call to `llvm.dbg.declare`.
unsafe fn dbg_declare(call: LLVMValueRef) -> Option<(LLVMValueRef, String)> {
    // SAFETY: the operands of dbg.declare are metadata-as-value; LLVMIsAMDNode
    // accepts exactly the kinds LLVMGetMDNodeOperands handles (an MDNode or
    // a ValueAsMetadata), and the counts size the buffers.
    unsafe {
        if LLVMGetNumArgOperands(call) < 2 {
            return None;
        }
        let address = LLVMGetOperand(call, 0);
        let variable = LLVMGetOperand(call, 1);
        if LLVMIsAMDNode(address).is_null() || LLVMIsAMDNode(variable).is_null() {
            return None;
        }
        if LLVMGetMDNodeNumOperands(address) != 1 {
            return None;
        }
        let mut alloca = std::ptr::null_mut();
        LLVMGetMDNodeOperands(address, &mut alloca);
        if alloca.is_null() || LLVMIsAAllocaInst(alloca).is_null() {
            return None;
        }
        // DILocalVariable: operand 0 is the scope, 1 the name.
        let n = LLVMGetMDNodeNumOperands(variable) as usize;
        if n < 2 {
            return None;
        }
        let mut ops = vec![std::ptr::null_mut(); n];
        LLVMGetMDNodeOperands(variable, ops.as_mut_ptr());
        let name = ops[1];
        if name.is_null() {
            return None;
        }
        let mut len = 0u32;
        let ptr = LLVMGetMDString(name, &mut len);
        if ptr.is_null() || len == 0 {
            return None;
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize);
        Some((alloca, String::from_utf8_lossy(bytes).into_owned()))
    }
}

/// A constant operand as a [`Val`].
///
/// # Safety
/// `v` must be a live value.
pub(crate) unsafe fn const_val(v: LLVMValueRef) -> Val {
    // SAFETY: kinds are checked with LLVMIsA* before kind-specific calls.
    unsafe {
        let mut v = v;
        for _ in 0..16 {
            if v.is_null() {
                return Val::Other;
            }
            if !LLVMIsAConstantInt(v).is_null() {
                if LLVMGetIntTypeWidth(LLVMTypeOf(v)) > 64 {
                    return Val::Other;
                }
                return Val::Int(LLVMConstIntGetSExtValue(v));
            }
            if !LLVMIsAConstantPointerNull(v).is_null() {
                return Val::Null;
            }
            if !LLVMIsAGlobalValue(v).is_null() {
                return Val::Global(value_name(v));
            }
            if !LLVMIsAConstantExpr(v).is_null() {
                match LLVMGetConstOpcode(v) {
                    LLVMOpcode::LLVMBitCast
                    | LLVMOpcode::LLVMAddrSpaceCast
                    | LLVMOpcode::LLVMIntToPtr
                    | LLVMOpcode::LLVMPtrToInt
                    | LLVMOpcode::LLVMGetElementPtr => {
                        v = LLVMGetOperand(v, 0);
                        continue;
                    }
                    _ => return Val::Other,
                }
            }
            return Val::Other;
        }
        Val::Other
    }
}

/// # Safety
/// `value` must be a live, non-null LLVM value.
pub(crate) unsafe fn value_name(value: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: per this function's contract; the bytes are copied at once.
    unsafe {
        let ptr = LLVMGetValueName2(value, &mut len);
        if ptr.is_null() || len == 0 {
            return String::new();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;

    /// The functions of textual IR `ir`.
    fn read(ir: &str) -> Vec<Function> {
        let context = Context::create();
        let module = Module::parse(&context, "test.ll", ir.as_bytes()).unwrap();
        read_module(&module, 0, &mut Files::default()).functions
    }

    #[test]
    fn operands_name_instructions_parameters_and_constants() {
        let fns = read(
            "define i32 @f(i32 %n, i1 %c) {\n\
             entry:\n  %x.addr = alloca i32\n  store i32 %n, ptr %x.addr\n  \
             %v = load i32, ptr %x.addr\n  %s = add i32 %v, 7\n  \
             br i1 %c, label %a, label %b\n\
             a:\n  ret i32 %s\n\
             b:\n  unreachable\n}\n",
        );
        let f = &fns[0];
        assert_eq!((f.name.as_str(), f.internal), ("f", false));
        let ops: Vec<(&Op, &[Val])> = f.insts.iter().map(|i| (&i.op, &i.ops[..])).collect();
        assert_eq!(
            ops,
            [
                // A value name names an alloca debug information does not.
                (&Op::Alloca(Some("x".to_owned())), &[][..]),
                (&Op::Store, &[Val::Arg(0), Val::Inst(0)][..]),
                (&Op::Load, &[Val::Inst(0)][..]),
                (&Op::Compute, &[Val::Inst(2), Val::Int(7)][..]),
                (&Op::Br, &[Val::Arg(1)][..]),
                (&Op::Ret, &[Val::Inst(3)][..]),
                (&Op::Other, &[][..]),
            ]
        );
        assert!(f.insts[0].is_ptr && !f.insts[2].is_ptr);
        let blocks: Vec<(InstId, InstId, &[BlockId], Term)> = f
            .blocks
            .iter()
            .map(|b| (b.first, b.end, &b.succs[..], b.term))
            .collect();
        assert_eq!(
            blocks,
            [
                (0, 5, &[1, 2][..], Term::Br),
                (5, 6, &[][..], Term::Ret),
                (6, 7, &[][..], Term::Unreachable),
            ]
        );
        assert_eq!(f.insts[5].block, 1);
    }

    /// The divergence pass tells which side of `rank == 0` the root takes.
    #[test]
    fn comparisons_keep_their_predicate() {
        let fns = read(
            "define i1 @f(i32 %n) {\n\
             entry:\n  %e = icmp eq i32 %n, 0\n  %d = icmp ne i32 %n, 1\n  \
             %l = icmp slt i32 %n, 2\n  ret i1 %e\n}\n",
        );
        let f = &fns[0];
        let ops: Vec<&Op> = f.insts[..3].iter().map(|i| &i.op).collect();
        assert_eq!(
            ops,
            [
                &Op::Compare(IntCmp::Eq),
                &Op::Compare(IntCmp::Ne),
                &Op::Compare(IntCmp::Slt)
            ]
        );
    }

    #[test]
    fn an_exception_pad_marks_its_block_and_an_invoke_cannot_be_split() {
        let fns = read(
            "declare i32 @__gxx_personality_v0(...)\ndeclare void @g(i32)\n\
             define internal void @h() personality ptr @__gxx_personality_v0 {\n\
             entry:\n  invoke void @g(i32 1) to label %ok unwind label %pad\n\
             ok:\n  ret void\n\
             pad:\n  %lp = landingpad { ptr, i32 } cleanup\n  resume { ptr, i32 } %lp\n}\n",
        );
        let f = &fns[0];
        assert!(f.internal);
        assert_eq!(f.insts[0].op, Op::Call(Callee::Named("g".to_owned())));
        assert_eq!(f.insts[0].ops, [Val::Int(1)]);
        let shape: Vec<(Term, bool)> = f.blocks.iter().map(|b| (b.term, b.pad)).collect();
        assert_eq!(
            shape,
            [
                (Term::Unsplittable, false),
                (Term::Ret, false),
                (Term::Unsplittable, true),
            ]
        );
    }
}
