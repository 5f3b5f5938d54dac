//! `#[kernel]`: the attribute that turns an ordinary `pub unsafe fn` (raw device pointers) or
//! `pub fn` (a safe kernel: slices and `DisjointSlice`s) into a GPU entry point, and gives the
//! host a typed handle to launch it with.
//!
//! ```ignore
//! /// y ← a·x + y. Thread mapping: one thread per element. Bytes per element: 12.
//! #[kernel(launch_bounds(256, 2))]
//! pub unsafe fn saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) { ... }
//! ```
//! expands, in the **device build** (`target_arch = "nvptx64"`), to
//! ```ignore
//! #[unsafe(no_mangle)]
//! pub unsafe extern "ptx-kernel" fn saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) { ... }
//! core::arch::global_asm!("// kernel-abi: my_kernels::saxpy launch_bounds 256 2");
//! ```
//! (the symbol is the function's name, the PTX kernel calling convention; the comment line
//! tells the PTX builder to add `.maxntid 256, 1, 1` / `.minnctapersm 2` to the entry and
//! to list the kernel in the host's kernel table), and in the **host build** to
//! ```ignore
//! /// y ← a·x + y. ...
//! #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
//! pub struct saxpy;
//! impl ptxkit_device::Kernel for saxpy {
//!     const NAME: &'static str = "saxpy";
//!     type Params = (*const f32, *mut f32, u32, f32);
//!     const PARAMS: &'static [Param] = &[Param::of::<*const f32>("x"), ...];
//!     const LAUNCH_BOUNDS: Option<LaunchBounds> = Some(LaunchBounds { max_threads: 256, min_blocks: 2 });
//!     const DYNAMIC_SHARED_BYTES: u32 = 0;
//! }
//! impl saxpy {
//!     #[doc(hidden)]
//!     #[allow(dead_code)]
//!     unsafe fn device_body(x: *const f32, y: *mut f32, n: u32, a: f32) { ... }
//! }
//! ```
//! (the body compiled for the host too, never called: `cargo check`, clippy and
//! rust-analyzer check it; the device API exists in host builds, each function a panic)
//! which the host launches with `gpu.launch(my_kernels::saxpy, cfg, (&x, &mut y, n, a))`,
//! the tuple checked against `Params` at compile time.
//!
//! A **safe kernel** is declared `pub fn` (no `unsafe`); each parameter is a read-only slice
//! `&[T]`, an output `DisjointSlice<T>` / `DisjointSlice2d<T>` (see `ptxkit_device::safe`), or
//! a value:
//! ```ignore
//! #[kernel]
//! pub fn saxpy(x: &[f32], mut y: DisjointSlice<f32>, a: f32) { ... }
//! ```
//! Its device entry point takes two `.param`s per slice, the device pointer (a kernel pointer
//! parameter, so accesses are `ld.global`/`st.global`) and the length (a `DisjointSlice2d`:
//! pointer, row width, height), and calls the function as written (an inner
//! `#[inline(always)] fn body`, so its body is checked as safe code) with the slices rebuilt.
//! In the host build `Params` names the markers `safe::Input<T>`, `safe::Output<T>`,
//! `safe::Output2d<T>`, e.g. `(Input<f32>, Output<f32>, f32)`, `PARAMS` lists the PTX
//! `.param`s (`x`, `x.len`, ...), and `gpu.launch(saxpy, cfg, (&x, &mut y, 2.0f32))` passes
//! each buffer's pointer and length. A `&mut` parameter (every thread would hold the
//! whole buffer) or a reference other than `&[T]` is refused.
//!
//! Arguments of the attribute, comma-separated, all optional:
//! - `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`: CUDA C's
//!   `__launch_bounds__`; 1 ≤ max_threads ≤ 1024, min_blocks ≥ 1 (default 1).
//! - `block(x)`, `block(x, y)` or `block(x, y, z)`: the block-shape contract, the only block
//!   the kernel may be launched with (no CUDA C spelling; OpenCL's `reqd_work_group_size`).
//!   The entry gets PTX's `.reqntid x, y, z` (the driver refuses another shape), the host
//!   handle `Kernel::BLOCK` (the typed launch refuses another shape first, saying so), and
//!   its first statement tells the compiler `blockDim` = (x, y, z) and `threadIdx` below it,
//!   so the block's size is a constant wherever the kernel reads it (a fill loop's stride, a
//!   linear index) and `threadIdx.x % x` folds. Implies `launch_bounds(x·y·z)`; a
//!   `launch_bounds` beside it may only add `min_blocks`.
//! - `thread_idx_hints = false` (with `block`): the first statement tells the compiler
//!   `blockDim` only, not `threadIdx` below it. Those bounds fold most kernels' index
//!   arithmetic (the cookbook's `jacobi_5pt_tiled`: 104 sm_90 instructions with them, 160
//!   without), but LLVM may keep values live around them and spill: heat's single-pass kernel
//!   under `block(64, 16)` has 64 registers and 140 bytes of spills with them, 56 registers
//!   and none without (sm_90; its later second steady copy uses all 64, still without).
//! - `dynamic_shared = EXPR`: the bytes of dynamic shared memory each block needs (a `u32`
//!   constant expression visible in the kernel's module); the host launches with at least
//!   that much and raises the kernel's limit past 48 KiB when needed.
//!
//! - `instantiate(name_f32 = f32, name_f64 = f64)`: the instances of a generic kernel
//!   (`pub unsafe fn name<T: ...>(...)` or a safe `pub fn name<T>`), each a PTX entry point
//!   `name_f32` calling `name::<f32>` and a host handle `name_f32` whose `Params` has `T`
//!   replaced by `f32` (also in `dynamic_shared`). Several generic parameters, const ones
//!   included, take a list in order: `name_f32_4 = (f32, 4)`. The generic function itself
//!   stays, in both builds (`#[inline(always)]` on the GPU unless it says otherwise), so its
//!   body is checked on the host as any kernel's.
//!
//! This mirrors rust-cuda's `#[kernel]` from `cuda_std`, without that crate's nightly-2021
//! dependencies. It uses only `proc_macro`, so the device build needs no extra crates. The
//! generated code names `::ptxkit_device`, so a crate that uses the attribute depends on
//! `ptxkit-device` (which re-exports it as `ptxkit_device::kernel`).

mod unroll;

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Marks a `pub unsafe fn` (raw pointers) or a safe `pub fn` (slices, `DisjointSlice`s) as a
/// PTX kernel entry point (see the crate documentation).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item) {
        Ok(tokens) => tokens,
        Err((span, message)) => compile_error(span, &message),
    }
}

/// `unroll!(for i in 0..N { body })`: the loop written out N times, as CUDA C's
/// `#pragma unroll` (see `ptxkit_device`'s `unroll` module).
#[proc_macro]
pub fn unroll(input: TokenStream) -> TokenStream {
    match unroll::expand(input) {
        Ok(tokens) => tokens,
        Err((span, message)) => compile_error(span, &message),
    }
}

type Failure = (Span, String);

/// What the attribute's arguments say.
#[derive(Default)]
struct Options {
    launch_bounds: Option<(u32, u32)>,
    /// `block(x, y, z)`: the block-shape contract (then `launch_bounds` holds its threads).
    block: Option<[u32; 3]>,
    /// `thread_idx_hints = false`: under `block(...)`, tell the compiler `blockDim` only.
    thread_idx_hints: Option<bool>,
    dynamic_shared: Option<TokenStream>,
    /// `instantiate(name = Type, ...)`: each entry point's name and its generic arguments.
    instances: Vec<Instance>,
}

/// One instantiation of a generic kernel: the entry point's name and the generic arguments,
/// one token stream per generic parameter, in order.
struct Instance {
    name: Ident,
    arguments: Vec<TokenStream>,
}

/// One parameter: its name and its type's tokens.
struct Param {
    name: String,
    ty: TokenStream,
}

fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream, Failure> {
    let options = parse_options(attr)?;
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let Some(fn_pos) = tokens.iter().position(|t| is_ident(t, "fn")) else {
        return Err((Span::call_site(), "#[kernel] must be placed on a function".into()));
    };
    // `pub unsafe fn`: raw device pointers, the entry point is the function itself. `pub fn`:
    // a safe kernel (slices, `DisjointSlice`s, values), entered through a wrapper.
    let is_safe = !tokens[..fn_pos].iter().any(|t| is_ident(t, "unsafe"));
    let Some(TokenTree::Ident(name)) = tokens.get(fn_pos + 1) else {
        return Err((tokens[fn_pos].span(), "expected the kernel's name after `fn`".into()));
    };
    let name_str = name.to_string();
    // `<...>` after the name: a generic kernel, entered through its instantiations.
    let (generics, after_generics) = match tokens.get(fn_pos + 2) {
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => {
            let (generics, end) = parse_generics(&tokens, fn_pos + 2)?;
            (Some(generics), end)
        }
        _ => (None, fn_pos + 2),
    };
    let params_group = match tokens.get(after_generics) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => g.clone(),
        _ => return Err((name.span(), "expected the kernel's parameter list".into())),
    };
    let params = parse_params(&params_group)?;
    match (generics, options.instances.is_empty()) {
        (Some(generics), false) => {
            return expand_generic(&options, &tokens, fn_pos, is_safe, &generics, &params);
        }
        (Some(_), true) => {
            return Err((
                name.span(),
                "a generic #[kernel] needs its instances, each a PTX entry point of one signature: \
                 `#[kernel(instantiate(name_f32 = f32, name_f64 = f64))]`"
                    .into(),
            ));
        }
        (None, false) => {
            return Err((
                options.instances[0].name.span(),
                "`instantiate(...)` names the instances of a generic kernel; this one has no generic parameters"
                    .into(),
            ));
        }
        (None, true) => {}
    }
    let kinds = if is_safe {
        params.iter().map(|p| safe_param_kind(&p.ty)).collect::<Result<Vec<_>, _>>()?
    } else {
        params.iter().map(|_| SafeParam::Value).collect()
    };

    let (visibility, docs) = visibility_and_docs(&tokens[..fn_pos]);

    let mut out: Vec<TokenTree> = Vec::new();
    // Device build: the entry point itself, and the marker for the PTX builder.
    out.extend(attribute("cfg(target_arch = \"nvptx64\")"));
    out.extend(attribute("unsafe(no_mangle)"));
    out.extend(tokens[..fn_pos].iter().cloned());
    if is_safe {
        out.extend(safe_entry(
            name,
            &params,
            &kinds,
            EntryBody::Inner(&tokens[fn_pos + 2..]),
            block_prologue(&options),
        ));
    } else {
        out.push(Ident::new("extern", Span::call_site()).into());
        out.push(Literal::string("ptx-kernel").into());
        // The body, after the block-shape prologue (if any).
        let (body, signature) = tokens[fn_pos..].split_last().expect("`fn` and a name");
        out.extend(signature.iter().cloned());
        match body {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                // After the body's inner attributes (`#![...]`), which must come first.
                let body: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut start = 0;
                while let [TokenTree::Punct(hash), TokenTree::Punct(bang), TokenTree::Group(attr), ..] =
                    &body[start..]
                    && hash.as_char() == '#'
                    && bang.as_char() == '!'
                    && attr.delimiter() == Delimiter::Bracket
                {
                    start += 3;
                }
                let mut stream: TokenStream = body[..start].iter().cloned().collect();
                stream.extend(block_prologue(&options));
                stream.extend(body[start..].iter().cloned());
                let mut group = Group::new(Delimiter::Brace, stream);
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => return Err((other.span(), "expected the kernel's body".into())),
        }
    }
    out.extend(marker(&name_str, options.launch_bounds, options.block));

    // Host build: the typed handle.
    let dynamic_shared = options.dynamic_shared.clone().unwrap_or_else(|| parse("0"));
    out.extend(host_handle(name, docs, &visibility, &params, &kinds, &options, dynamic_shared));

    // Host build: the kernel's body too, as a private function never called, so that
    // `cargo check`, clippy and rust-analyzer check it with the host's tools (the device API
    // exists on the host, each function a panic if called).
    let mut checked: Vec<TokenTree> = Vec::new();
    let mut k = 0;
    while k < fn_pos {
        if is_ident(&tokens[k], "pub") {
            // The visibility (and its `(crate)`) goes: the copy is private.
            if matches!(tokens.get(k + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
            {
                k += 1;
            }
        } else {
            checked.push(tokens[k].clone());
        }
        k += 1;
    }
    checked.extend(parse("fn device_body"));
    checked.extend(tokens[fn_pos + 2..].iter().cloned());
    let mut block = TokenStream::new();
    block.extend(attribute("doc(hidden)"));
    block.extend(attribute("allow(dead_code)"));
    block.extend(checked);
    out.extend(attribute("cfg(not(target_arch = \"nvptx64\"))"));
    out.extend(parse("impl"));
    out.push(TokenTree::Ident(name.clone()));
    out.push(TokenTree::Group(Group::new(Delimiter::Brace, block)));
    Ok(out.into_iter().collect())
}

/// The visibility (`pub`, `pub(crate)`) and the doc attributes among the tokens before `fn`.
fn visibility_and_docs(before_fn: &[TokenTree]) -> (Vec<TokenTree>, Vec<TokenTree>) {
    let mut visibility: Vec<TokenTree> = Vec::new();
    let mut docs: Vec<TokenTree> = Vec::new();
    let mut i = 0;
    while i < before_fn.len() {
        match &before_fn[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = before_fn.get(i + 1) {
                    if g.stream().into_iter().next().is_some_and(|t| is_ident(&t, "doc")) {
                        docs.extend(before_fn[i..i + 2].iter().cloned());
                    }
                    i += 2;
                    continue;
                }
            }
            TokenTree::Ident(id) if id.to_string() == "pub" => {
                visibility.push(before_fn[i].clone());
                if let Some(TokenTree::Group(g)) = before_fn.get(i + 1)
                    && g.delimiter() == Delimiter::Parenthesis
                {
                    visibility.push(before_fn[i + 1].clone());
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (visibility, docs)
}

/// The device build's marker for the PTX builder: `// kernel-abi: <module>::<entry>` and the
/// launch bounds.
fn marker(entry: &str, launch_bounds: Option<(u32, u32)>, block: Option<[u32; 3]>) -> TokenStream {
    let mut bounds = launch_bounds.map(|(t, b)| format!(" launch_bounds {t} {b}")).unwrap_or_default();
    if let Some([x, y, z]) = block {
        bounds.push_str(&format!(" block {x} {y} {z}"));
    }
    parse(&format!(
        "#[cfg(target_arch = \"nvptx64\")] ::core::arch::global_asm!(::core::concat!(\"// kernel-abi: \", \
         ::core::module_path!(), \"::{entry}{bounds}\"));"
    ))
}

/// The host build's handle of the entry point `name`: a unit struct carrying `docs` and
/// implementing `Kernel` with the parameters' types and layouts.
fn host_handle(
    name: &Ident,
    docs: Vec<TokenTree>,
    visibility: &[TokenTree],
    params: &[Param],
    kinds: &[SafeParam],
    options: &Options,
    dynamic_shared: TokenStream,
) -> TokenStream {
    let name_str = name.to_string();
    let mut out: Vec<TokenTree> = Vec::new();
    out.extend(attribute("cfg(not(target_arch = \"nvptx64\"))"));
    out.extend(docs);
    out.extend(parse(&format!(
        "#[doc = \"\"] #[doc = \"Host handle: launch with `gpu.launch({name_str}, config, (arguments...))`; \
         the argument tuple is checked against the parameters at compile time.\"]"
    )));
    out.extend(attribute("allow(non_camel_case_types)"));
    out.extend(attribute("derive(Clone, Copy, Debug, Default, PartialEq, Eq)"));
    out.extend(visibility.iter().cloned());
    out.extend(parse("struct"));
    out.push(TokenTree::Ident(name.clone()));
    out.extend(parse(";"));

    let mut param_types = TokenStream::new();
    let mut layouts = TokenStream::new();
    for (p, kind) in params.iter().zip(kinds) {
        param_types.extend(kind.host_type(&p.ty));
        param_types.extend(parse(","));
        for (suffix, ty) in kind.abi_params(&p.ty) {
            layouts.extend(parse("::ptxkit_device::Param::of::<"));
            layouts.extend(ty);
            layouts.extend(parse(&format!(">({:?}),", format!("{}{suffix}", p.name))));
        }
    }
    let launch_bounds = match options.launch_bounds {
        Some((t, b)) => {
            format!(
                "::core::option::Option::Some(::ptxkit_device::LaunchBounds {{ max_threads: {t}, min_blocks: {b} }})"
            )
        }
        None => "::core::option::Option::None".into(),
    };
    let block = match options.block {
        Some([x, y, z]) => format!("::core::option::Option::Some([{x}, {y}, {z}])"),
        None => "::core::option::Option::None".into(),
    };
    let mut body = TokenStream::new();
    body.extend(parse(&format!("const NAME: &'static str = {name_str:?}; type Params = ")));
    body.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, param_types))]);
    body.extend(parse("; const PARAMS: &'static [::ptxkit_device::Param] = &"));
    body.extend([TokenTree::Group(Group::new(Delimiter::Bracket, layouts))]);
    body.extend(parse(&format!(
        "; const LAUNCH_BOUNDS: ::core::option::Option<::ptxkit_device::LaunchBounds> = {launch_bounds}; \
         const BLOCK: ::core::option::Option<[u32; 3]> = {block}; const DYNAMIC_SHARED_BYTES: u32 = "
    )));
    body.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, dynamic_shared))]);
    body.extend(parse(";"));
    out.extend(attribute("cfg(not(target_arch = \"nvptx64\"))"));
    out.extend(parse("impl ::ptxkit_device::Kernel for"));
    out.push(TokenTree::Ident(name.clone()));
    out.push(TokenTree::Group(Group::new(Delimiter::Brace, body)));
    out.into_iter().collect()
}

/// How a safe kernel's parameter reaches it.
enum SafeParam {
    /// `&[T]`: an `Input<T>` (pointer, length) made into a slice.
    Input(TokenStream),
    /// `DisjointSlice<T>`: an `Output<T>` (pointer, length).
    Output(TokenStream),
    /// `DisjointSlice2d<T>`: an `Output2d<T>` (pointer, width, height).
    Output2d(TokenStream),
    /// `Grid2d<T>`: an `Input2d<T>` (pointer, width, height).
    Input2d(TokenStream),
    /// Anything else (and every parameter of an `unsafe fn` kernel): passed as it is.
    Value,
}

impl SafeParam {
    /// The type `Kernel::Params` names for the parameter: a marker of `ptxkit_device::safe`
    /// for a slice, the declared type for a value.
    fn host_type(&self, declared: &TokenStream) -> TokenStream {
        let (marker, element) = match self {
            SafeParam::Input(element) => ("Input", element),
            SafeParam::Output(element) => ("Output", element),
            SafeParam::Output2d(element) => ("Output2d", element),
            SafeParam::Input2d(element) => ("Input2d", element),
            SafeParam::Value => return declared.clone(),
        };
        let mut ty = parse(&format!("::ptxkit_device::safe::{marker}<"));
        ty.extend(element.clone());
        ty.extend(parse(">"));
        ty
    }

    /// The PTX `.param`s the parameter becomes: (name suffix, type) for each, in order. A
    /// slice is its pointer (a kernel pointer parameter: global memory) and its length; a 2-D
    /// output its pointer, row width and height.
    fn abi_params(&self, declared: &TokenStream) -> Vec<(&'static str, TokenStream)> {
        let pointer = |kind: &str, element: &TokenStream| {
            let mut ty = parse(kind);
            ty.extend(element.clone());
            ty
        };
        match self {
            SafeParam::Input(element) => vec![("", pointer("*const", element)), (".len", parse("usize"))],
            SafeParam::Output(element) => vec![("", pointer("*mut", element)), (".len", parse("usize"))],
            SafeParam::Output2d(element) => {
                vec![("", pointer("*mut", element)), (".width", parse("usize")), (".height", parse("usize"))]
            }
            SafeParam::Input2d(element) => {
                vec![
                    ("", pointer("*const", element)),
                    (".width", parse("usize")),
                    (".height", parse("usize")),
                ]
            }
            SafeParam::Value => vec![("", declared.clone())],
        }
    }
}

/// Classifies a safe kernel's parameter type: `&[T]`, `DisjointSlice<T>` (any path, with or
/// without a lifetime), `DisjointSlice2d<T>`, or a value. Refuses other references (a `&mut`
/// would give every thread the whole buffer, a `&T` has no host counterpart) and raw pointers
/// (a kernel over raw pointers is a `pub unsafe fn`).
fn safe_param_kind(ty: &TokenStream) -> Result<SafeParam, Failure> {
    let tokens: Vec<TokenTree> = ty.clone().into_iter().collect();
    if let Some(TokenTree::Punct(amp)) = tokens.first()
        && amp.as_char() == '&'
    {
        let mut rest = &tokens[1..];
        // A lifetime: `'` then its name.
        if let [TokenTree::Punct(q), TokenTree::Ident(_), tail @ ..] = rest
            && q.as_char() == '\''
        {
            rest = tail;
        }
        return match rest {
            [TokenTree::Group(g)] if g.delimiter() == Delimiter::Bracket => Ok(SafeParam::Input(g.stream())),
            [first, ..] if is_ident(first, "mut") => Err((
                amp.span(),
                "a safe #[kernel] cannot take `&mut`: every thread would hold the whole buffer; \
                 take a `DisjointSlice<T>` (one element per thread), or declare the kernel `unsafe fn`"
                    .into(),
            )),
            _ => Err((
                amp.span(),
                "a safe #[kernel] takes references only as read-only slices `&[T]`; pass other \
                 values by value"
                    .into(),
            )),
        };
    }
    if let Some(TokenTree::Punct(star)) = tokens.first()
        && star.as_char() == '*'
    {
        return Err((
            star.span(),
            "a safe #[kernel] takes no raw pointers: read `&[T]`, write `DisjointSlice<T>` \
             (`ptxkit_device::safe`), or declare the kernel `pub unsafe fn`"
                .into(),
        ));
    }
    let generic = tokens.iter().position(|t| {
        is_ident(t, "DisjointSlice") || is_ident(t, "DisjointSlice2d") || is_ident(t, "Grid2d")
    });
    let Some(at) = generic else { return Ok(SafeParam::Value) };
    let args = match (tokens.get(at + 1), tokens.last()) {
        (Some(TokenTree::Punct(open)), Some(TokenTree::Punct(close)))
            if open.as_char() == '<' && close.as_char() == '>' && tokens.len() > at + 2 =>
        {
            tokens[at + 2..tokens.len() - 1].to_vec()
        }
        _ => return Err((tokens[at].span(), "write the output's element type: `DisjointSlice<T>`".into())),
    };
    // The generic arguments without the lifetime: the element type.
    let mut types = split_commas(args)
        .into_iter()
        .filter(|arg| !matches!(arg.first(), Some(TokenTree::Punct(q)) if q.as_char() == '\''));
    let (Some(element), None) = (types.next(), types.next()) else {
        return Err((tokens[at].span(), "an output is `DisjointSlice<T>` or `DisjointSlice<'a, T>`".into()));
    };
    let element: TokenStream = element.into_iter().collect();
    Ok(if is_ident(&tokens[at], "DisjointSlice") {
        SafeParam::Output(element)
    } else if is_ident(&tokens[at], "Grid2d") {
        SafeParam::Input2d(element)
    } else {
        SafeParam::Output2d(element)
    })
}

/// What a safe kernel's entry point runs.
enum EntryBody<'a> {
    /// The author's function (parameter list, return type and body after its name), held as
    /// an inner function `body`.
    Inner(&'a [TokenTree]),
    /// A function outside, by path: a generic kernel's instance (`name::<f32>`).
    Call(TokenStream),
}

/// A generic kernel: the function as written, in both builds (`#[inline(always)]` on the
/// GPU unless it says otherwise), and for each instance `name = Type` an entry point
/// `name` calling it with those generic arguments, its marker and its host handle, each with
/// the parameter types substituted.
fn expand_generic(
    options: &Options,
    tokens: &[TokenTree],
    fn_pos: usize,
    is_safe: bool,
    generics: &[Ident],
    params: &[Param],
) -> Result<TokenStream, Failure> {
    let kernel = match &tokens[fn_pos + 1] {
        TokenTree::Ident(name) => name.clone(),
        other => return Err((other.span(), "expected the kernel's name".into())),
    };
    let (visibility, docs) = visibility_and_docs(&tokens[..fn_pos]);
    let mut out: Vec<TokenTree> = Vec::new();
    let has_inline = tokens[..fn_pos].iter().any(|t| {
        matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket
            && g.stream().into_iter().next().is_some_and(|first| is_ident(&first, "inline")))
    });
    if !has_inline {
        out.extend(attribute("cfg_attr(target_arch = \"nvptx64\", inline(always))"));
    }
    out.extend(tokens.iter().cloned());

    let mut seen: Vec<String> = Vec::new();
    for instance in &options.instances {
        let entry = instance.name.to_string();
        if entry == kernel.to_string() || seen.contains(&entry) {
            return Err((
                instance.name.span(),
                format!(
                    "instance `{entry}` named twice (an instance needs a name of its own, not the kernel's)"
                ),
            ));
        }
        seen.push(entry.clone());
        if instance.arguments.len() != generics.len() {
            return Err((
                instance.name.span(),
                format!(
                    "`{entry}` gives {} generic argument(s) for {} parameter(s) ({}); write `{entry} = Type` for \
                     one, `{entry} = (A, B, ...)` for several",
                    instance.arguments.len(),
                    generics.len(),
                    generics.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let substitute = |tokens: &TokenStream| substitute(tokens.clone(), generics, &instance.arguments);
        let params: Vec<Param> =
            params.iter().map(|p| Param { name: p.name.clone(), ty: substitute(&p.ty) }).collect();
        let kinds = if is_safe {
            params.iter().map(|p| safe_param_kind(&p.ty)).collect::<Result<Vec<_>, _>>()?
        } else {
            params.iter().map(|_| SafeParam::Value).collect()
        };
        // `kernel::<arguments>`
        let mut callee: Vec<TokenTree> = vec![TokenTree::Ident(kernel.clone())];
        callee.extend(parse("::<"));
        for argument in &instance.arguments {
            callee.push(TokenTree::Group(Group::new(Delimiter::None, argument.clone())));
            callee.extend(parse(","));
        }
        callee.extend(parse(">"));
        let callee: TokenStream = callee.into_iter().collect();

        // Device build: the entry point.
        out.extend(attribute("cfg(target_arch = \"nvptx64\")"));
        out.extend(attribute("unsafe(no_mangle)"));
        out.extend(visibility.iter().cloned());
        if is_safe {
            out.extend(safe_entry(
                &instance.name,
                &params,
                &kinds,
                EntryBody::Call(callee),
                block_prologue(options),
            ));
        } else {
            let mut abi_params = TokenStream::new();
            let mut arguments = TokenStream::new();
            for (i, p) in params.iter().enumerate() {
                abi_params.extend(parse(&format!("__ptxkit_param_{i}: ")));
                abi_params.extend(p.ty.clone());
                abi_params.extend(parse(","));
                arguments.extend(parse(&format!("__ptxkit_param_{i},")));
            }
            out.extend(parse("unsafe extern \"ptx-kernel\" fn"));
            out.push(TokenTree::Ident(instance.name.clone()));
            out.push(TokenTree::Group(Group::new(Delimiter::Parenthesis, abi_params)));
            // The kernel's own contract is the caller's (the launch's), as for any kernel.
            let mut call: Vec<TokenTree> = block_prologue(options).into_iter().collect();
            call.extend(parse("unsafe"));
            let mut inner: Vec<TokenTree> = callee.into_iter().collect();
            inner.push(TokenTree::Group(Group::new(Delimiter::Parenthesis, arguments)));
            call.push(TokenTree::Group(Group::new(Delimiter::Brace, inner.into_iter().collect())));
            out.push(TokenTree::Group(Group::new(Delimiter::Brace, call.into_iter().collect())));
        }
        out.extend(marker(&entry, options.launch_bounds, options.block));

        // Host build: the handle.
        let arguments: Vec<String> = instance.arguments.iter().map(ToString::to_string).collect();
        let mut instance_docs = docs.clone();
        instance_docs.extend(parse(&format!(
            "#[doc = \"\"] #[doc = {:?}]",
            format!("The instance `{kernel}::<{}>` of the generic kernel `{kernel}`.", arguments.join(", "))
        )));
        let dynamic_shared = options.dynamic_shared.as_ref().map_or_else(|| parse("0"), substitute);
        out.extend(host_handle(
            &instance.name,
            instance_docs,
            &visibility,
            &params,
            &kinds,
            options,
            dynamic_shared,
        ));
    }
    Ok(out.into_iter().collect())
}

/// The names of a generic parameter list starting at `tokens[open]` (`<`), and the position
/// after its `>`. Lifetimes are refused (an entry point's parameters have no lifetimes to
/// instantiate); `const N: usize` names `N`.
fn parse_generics(tokens: &[TokenTree], open: usize) -> Result<(Vec<Ident>, usize), Failure> {
    let mut depth = 0i32;
    let mut close = None;
    for (at, token) in tokens.iter().enumerate().skip(open) {
        if let TokenTree::Punct(p) = token {
            let arrow = p.as_char() == '>'
                && matches!(tokens.get(at - 1), Some(TokenTree::Punct(q)) if q.as_char() == '-' && q.spacing() == Spacing::Joint);
            match p.as_char() {
                '<' => depth += 1,
                '>' if !arrow => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(at);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let Some(close) = close else {
        return Err((tokens[open].span(), "unclosed generic parameter list".into()));
    };
    let mut names = Vec::new();
    for piece in split_commas(tokens[open + 1..close].to_vec()) {
        match piece.as_slice() {
            [TokenTree::Punct(q), ..] if q.as_char() == '\'' => {
                return Err((
                    q.span(),
                    "a generic #[kernel] takes type and const parameters, not lifetimes".into(),
                ));
            }
            [first, TokenTree::Ident(name), ..] if is_ident(first, "const") => names.push(name.clone()),
            [TokenTree::Ident(name), ..] => names.push(name.clone()),
            _ => return Err((piece[0].span(), "expected a generic parameter's name".into())),
        }
    }
    Ok((names, close + 1))
}

/// `tokens` with each identifier of `names` (not after `::` or `.`) replaced by the matching
/// argument, in groups too. An argument of several tokens goes in an invisible group, so it
/// stays one type or expression.
fn substitute(tokens: TokenStream, names: &[Ident], arguments: &[TokenStream]) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    for token in tokens {
        let after_path = match out.as_slice() {
            [.., TokenTree::Punct(a), TokenTree::Punct(b)] if a.as_char() == ':' && b.as_char() == ':' => {
                true
            }
            [.., TokenTree::Punct(dot)] => dot.as_char() == '.',
            _ => false,
        };
        match token {
            TokenTree::Ident(ident) if !after_path => {
                match names.iter().position(|n| *n.to_string() == ident.to_string()) {
                    Some(k) => {
                        let argument: Vec<TokenTree> = arguments[k].clone().into_iter().collect();
                        match argument.as_slice() {
                            [single] => out.push(single.clone()),
                            _ => {
                                out.push(TokenTree::Group(Group::new(Delimiter::None, arguments[k].clone())))
                            }
                        }
                    }
                    None => out.push(TokenTree::Ident(ident)),
                }
            }
            TokenTree::Group(group) => {
                let mut new = Group::new(group.delimiter(), substitute(group.stream(), names, arguments));
                new.set_span(group.span());
                out.push(TokenTree::Group(new));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// The entry point's first statement under `block(x, y, z)`: the block-shape contract told
/// to the compiler (`ptxkit_device::thread::assume_block_shape`, or `assume_block_dims` under
/// `thread_idx_hints = false`; the `.reqntid` the PTX builder adds makes the driver refuse
/// any other shape, and the typed launch checks first). Nothing without a block shape.
fn block_prologue(options: &Options) -> TokenStream {
    let assume = match options.thread_idx_hints {
        Some(false) => "assume_block_dims",
        _ => "assume_block_shape",
    };
    match options.block {
        Some([x, y, z]) => {
            parse(&format!("unsafe {{ ::ptxkit_device::thread::{assume}::<{x}, {y}, {z}>() }};"))
        }
        None => TokenStream::new(),
    }
}

/// The device entry point of a safe kernel: `unsafe extern "ptx-kernel" fn name(<ABI
/// parameters>)` that holds the author's function, as written, under the name `body`, and calls
/// it with the slices rebuilt from the parameters. `after_name` is the author's parameter
/// list, return type and body; `prologue` the block-shape contract's statement, if any.
fn safe_entry(
    name: &Ident,
    params: &[Param],
    kinds: &[SafeParam],
    body: EntryBody,
    prologue: TokenStream,
) -> TokenStream {
    let mut abi_params = TokenStream::new();
    let mut call_args = TokenStream::new();
    let nul_name = format!("{:?}", format!("{name}\0"));
    for (i, (p, kind)) in params.iter().zip(kinds).enumerate() {
        let parts = kind.abi_params(&p.ty);
        let mut names = Vec::new();
        for (j, (_, ty)) in parts.into_iter().enumerate() {
            let part = format!("__ptxkit_param_{i}_{j}");
            abi_params.extend(parse(&format!("{part}: ")));
            abi_params.extend(ty);
            abi_params.extend(parse(","));
            names.push(part);
        }
        let names = names.join(", ");
        call_args.extend(parse(&match kind {
            SafeParam::Input(_) => format!("::ptxkit_device::safe::input_from_raw_parts({names}),"),
            SafeParam::Output(_) => {
                format!("::ptxkit_device::safe::DisjointSlice::from_raw_parts({names}, {nul_name}),")
            }
            SafeParam::Output2d(_) => {
                format!("::ptxkit_device::safe::DisjointSlice2d::from_raw_parts({names}, {nul_name}),")
            }
            SafeParam::Input2d(_) => format!("::ptxkit_device::safe::Grid2d::from_raw_parts({names}),"),
            SafeParam::Value => format!("{names},"),
        }));
    }
    let mut out = parse("unsafe extern \"ptx-kernel\" fn");
    out.extend([
        TokenTree::Ident(name.clone()),
        TokenTree::Group(Group::new(Delimiter::Parenthesis, abi_params)),
    ]);
    let mut inner = TokenStream::new();
    let mut call = match body {
        EntryBody::Inner(after_name) => {
            inner.extend(attribute("inline(always)"));
            inner.extend(parse("fn body"));
            inner.extend(after_name.iter().cloned());
            parse("body")
        }
        EntryBody::Call(callee) => callee,
    };
    // The `unsafe` block's justification (generated code carries no comments): the typed
    // launch (`ptxkit-host`) passes for each input a `&CudaSlice`'s pointer and length (valid,
    // aligned, non-null, not written during the launch) and for each output its own
    // `&mut CudaSlice`'s (reached by no other parameter); each output is made once per thread.
    inner.extend(prologue);
    inner.extend(parse("unsafe"));
    call.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, call_args))]);
    inner.extend([TokenTree::Group(Group::new(Delimiter::Brace, call))]);
    out.extend([TokenTree::Group(Group::new(Delimiter::Brace, inner))]);
    out
}

/// `launch_bounds(256, 2), dynamic_shared = BYTES`.
/// What `#[kernel(...)]` accepts, for the messages that name an argument it does not.
const EXPECTED_ARGUMENTS: &str = "expected `launch_bounds(...)`, `block(...)`, `thread_idx_hints = false`, `dynamic_shared = ...` or `instantiate(...)`";

fn parse_options(attr: TokenStream) -> Result<Options, Failure> {
    let mut options = Options::default();
    for arg in split_commas(attr.into_iter().collect()) {
        let Some(TokenTree::Ident(key)) = arg.first() else {
            return Err((arg[0].span(), EXPECTED_ARGUMENTS.into()));
        };
        match key.to_string().as_str() {
            "launch_bounds" => {
                let group = match (arg.get(1), arg.len()) {
                    (Some(TokenTree::Group(g)), 2) if g.delimiter() == Delimiter::Parenthesis => g,
                    _ => {
                        return Err((
                            key.span(),
                            "write `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`"
                                .into(),
                        ));
                    }
                };
                if options.launch_bounds.is_some() {
                    return Err((key.span(), "`launch_bounds` given twice".into()));
                }
                let numbers = split_commas(group.stream().into_iter().collect());
                let number = |tokens: &[TokenTree]| {
                    literal_u32(tokens, group.span(), "launch bounds", "launch_bounds(256, 2)")
                };
                let (threads, blocks) = match numbers.as_slice() {
                    [t] => (number(t)?, 1),
                    [t, b] => (number(t)?, number(b)?),
                    _ => {
                        return Err((
                            group.span(),
                            "write `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`"
                                .into(),
                        ));
                    }
                };
                if !(1..=1024).contains(&threads) {
                    return Err((
                        group.span(),
                        format!(
                            "launch_bounds: max_threads must be 1 to 1024 (a block's limit), not {threads}"
                        ),
                    ));
                }
                if blocks == 0 {
                    return Err((group.span(), "launch_bounds: min_blocks must be at least 1".into()));
                }
                options.launch_bounds = Some((threads, blocks));
            }
            "block" => {
                let group = match (arg.get(1), arg.len()) {
                    (Some(TokenTree::Group(g)), 2) if g.delimiter() == Delimiter::Parenthesis => g,
                    _ => {
                        return Err((
                            key.span(),
                            "write `block(x)`, `block(x, y)` or `block(x, y, z)`".into(),
                        ));
                    }
                };
                if options.block.is_some() {
                    return Err((key.span(), "`block` given twice".into()));
                }
                let numbers = split_commas(group.stream().into_iter().collect());
                if numbers.is_empty() || numbers.len() > 3 {
                    return Err((group.span(), "write `block(x)`, `block(x, y)` or `block(x, y, z)`".into()));
                }
                let mut shape = [1u32; 3];
                for (side, tokens) in shape.iter_mut().zip(&numbers) {
                    *side = literal_u32(tokens, group.span(), "a block's sides", "block(32, 8)")?;
                }
                let threads = u64::from(shape[0]) * u64::from(shape[1]) * u64::from(shape[2]);
                if shape.contains(&0) || shape[2] > 64 || threads > 1024 {
                    return Err((
                        group.span(),
                        format!(
                            "block({}, {}, {}): each side at least 1, z at most 64, and at most 1024 threads in all",
                            shape[0], shape[1], shape[2]
                        ),
                    ));
                }
                options.block = Some(shape);
            }
            "instantiate" => {
                let group = match (arg.get(1), arg.len()) {
                    (Some(TokenTree::Group(g)), 2) if g.delimiter() == Delimiter::Parenthesis => g,
                    _ => {
                        return Err((
                            key.span(),
                            "write `instantiate(name_f32 = f32, name_f64 = f64)`".into(),
                        ));
                    }
                };
                for piece in split_commas(group.stream().into_iter().collect()) {
                    let (name, arguments) = match piece.as_slice() {
                        [TokenTree::Ident(name), TokenTree::Punct(eq), rest @ ..]
                            if eq.as_char() == '=' && !rest.is_empty() =>
                        {
                            // `(A, B)`: one argument per generic parameter; anything else: one.
                            let arguments = match rest {
                                [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
                                    split_commas(g.stream().into_iter().collect())
                                        .into_iter()
                                        .map(|a| a.into_iter().collect())
                                        .collect()
                                }
                                _ => vec![rest.iter().cloned().collect()],
                            };
                            (name.clone(), arguments)
                        }
                        _ => {
                            return Err((
                                piece[0].span(),
                                "each instance is `entry_name = Type` (or `entry_name = (A, B)` for several \
                                 generic parameters)"
                                    .into(),
                            ));
                        }
                    };
                    options.instances.push(Instance { name, arguments });
                }
                if options.instances.is_empty() {
                    return Err((key.span(), "`instantiate()` names no instance".into()));
                }
            }
            "thread_idx_hints" => {
                let value = match arg.as_slice() {
                    [_, TokenTree::Punct(eq), TokenTree::Ident(v)] if eq.as_char() == '=' => v.to_string(),
                    _ => String::new(),
                };
                if value != "true" && value != "false" {
                    return Err((
                        key.span(),
                        "write `thread_idx_hints = false` (or `= true`, the default)".into(),
                    ));
                }
                if options.thread_idx_hints.is_some() {
                    return Err((key.span(), "`thread_idx_hints` given twice".into()));
                }
                options.thread_idx_hints = Some(value == "true");
            }
            "dynamic_shared" => {
                let is_eq = matches!(arg.get(1), Some(TokenTree::Punct(p)) if p.as_char() == '=');
                if !is_eq || arg.len() < 3 {
                    return Err((key.span(), "write `dynamic_shared = BYTES` (a u32 constant)".into()));
                }
                if options.dynamic_shared.is_some() {
                    return Err((key.span(), "`dynamic_shared` given twice".into()));
                }
                options.dynamic_shared = Some(arg[2..].iter().cloned().collect());
            }
            other => {
                return Err((
                    key.span(),
                    format!("unknown #[kernel] argument `{other}`: {EXPECTED_ARGUMENTS}"),
                ));
            }
        }
    }
    if options.thread_idx_hints.is_some() && options.block.is_none() {
        return Err((
            Span::call_site(),
            "`thread_idx_hints` applies to a block shape: give `block(...)` beside it, or leave it out"
                .into(),
        ));
    }
    // A block shape fixes the launch bounds' threads (PTX's `.reqntid` replaces `.maxntid`);
    // `launch_bounds` beside it may only add `min_blocks`.
    if let Some(shape) = options.block {
        let threads = shape.iter().product();
        match options.launch_bounds {
            Some((max_threads, _)) if max_threads != threads => {
                return Err((
                    Span::call_site(),
                    format!(
                        "launch_bounds({max_threads}, ..) disagrees with block({}, {}, {}), a block of {threads} threads: \
                         leave out launch_bounds, or give it {threads} threads",
                        shape[0], shape[1], shape[2]
                    ),
                ));
            }
            Some(_) => {}
            None => options.launch_bounds = Some((threads, 1)),
        }
    }
    Ok(options)
}

/// A `u32` integer literal (a `$n:literal` from a `macro_rules!` arrives wrapped in an
/// invisible group); `what` and `example` word the error.
fn literal_u32(tokens: &[TokenTree], span: Span, what: &str, example: &str) -> Result<u32, Failure> {
    let tokens: Vec<TokenTree> = match tokens {
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::None => g.stream().into_iter().collect(),
        _ => tokens.to_vec(),
    };
    match tokens.as_slice() {
        [TokenTree::Literal(l)] => l
            .to_string()
            .trim_end_matches("u32")
            .replace('_', "")
            .parse::<u32>()
            .map_err(|_| (l.span(), format!("{what} are whole numbers, e.g. `{example}`"))),
        _ => Err((span, format!("{what} are integer literals, e.g. `{example}`"))),
    }
}

/// `name: Type, mut other: Type` → names and types.
fn parse_params(group: &Group) -> Result<Vec<Param>, Failure> {
    let mut params = Vec::new();
    for tokens in split_commas(group.stream().into_iter().collect()) {
        let Some(colon) = tokens.iter().position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))
        else {
            return Err((tokens[0].span(), "expected `name: Type`".into()));
        };
        let name = tokens[..colon].iter().rev().find_map(|t| match t {
            TokenTree::Ident(i) => Some(i.to_string()),
            _ => None,
        });
        let Some(name) = name else {
            return Err((tokens[0].span(), "a kernel parameter needs a plain name (no patterns)".into()));
        };
        if tokens.len() == colon + 1 {
            return Err((tokens[colon].span(), "expected the parameter's type".into()));
        }
        params.push(Param { name, ty: tokens[colon + 1..].iter().cloned().collect() });
    }
    Ok(params)
}

/// Splits tokens at commas outside `<...>` (groups are single tokens already); drops empty
/// pieces (a trailing comma).
fn split_commas(tokens: Vec<TokenTree>) -> Vec<Vec<TokenTree>> {
    let mut pieces = vec![Vec::new()];
    let mut depth = 0i32;
    for t in tokens {
        if let TokenTree::Punct(p) = &t {
            match p.as_char() {
                '<' => depth += 1,
                '>' if depth > 0 => depth -= 1,
                ',' if depth == 0 => {
                    pieces.push(Vec::new());
                    continue;
                }
                _ => {}
            }
        }
        pieces.last_mut().expect("one piece at least").push(t);
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

fn is_ident(token: &TokenTree, name: &str) -> bool {
    matches!(token, TokenTree::Ident(i) if i.to_string() == name)
}

fn parse(code: &str) -> TokenStream {
    code.parse().expect("generated code parses")
}

/// `#[<body>]` as tokens.
fn attribute(body: &str) -> Vec<TokenTree> {
    vec![Punct::new('#', Spacing::Alone).into(), Group::new(Delimiter::Bracket, parse(body)).into()]
}

/// `compile_error!("message")` pointing at `span`.
fn compile_error(span: Span, message: &str) -> TokenStream {
    let mut tokens: Vec<TokenTree> =
        parse(&format!("::core::compile_error!({message:?});")).into_iter().collect();
    for t in &mut tokens {
        t.set_span(span);
    }
    // The group's contents keep their spans too, so the error points at the offending tokens.
    tokens
        .into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => {
                let inner: TokenStream = g
                    .stream()
                    .into_iter()
                    .map(|mut t| {
                        t.set_span(span);
                        t
                    })
                    .collect();
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(span);
                TokenTree::Group(group)
            }
            other => other,
        })
        .collect()
}
