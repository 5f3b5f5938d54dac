//! `#[kernel]`: the attribute that turns an ordinary `pub unsafe fn` into a GPU entry point,
//! and gives the host a typed handle to launch it with.
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
//! Arguments of the attribute, comma-separated, all optional:
//! - `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`: CUDA C's
//!   `__launch_bounds__`; 1 ≤ max_threads ≤ 1024, min_blocks ≥ 1 (default 1).
//! - `dynamic_shared = EXPR`: the bytes of dynamic shared memory each block needs (a `u32`
//!   constant expression visible in the kernel's module); the host launches with at least
//!   that much and raises the kernel's limit past 48 KiB when needed.
//!
//! This mirrors rust-cuda's `#[kernel]` from `cuda_std`, without that crate's nightly-2021
//! dependencies. It uses only `proc_macro`, so the device build needs no extra crates. The
//! generated code names `::ptxkit_device`, so a crate that uses the attribute depends on
//! `ptxkit-device` (which re-exports it as `ptxkit_device::kernel`).

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Marks a `pub unsafe fn` as a PTX kernel entry point (see the crate documentation).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item) {
        Ok(tokens) => tokens,
        Err((span, message)) => compile_error(span, &message),
    }
}

type Failure = (Span, String);

/// What the attribute's arguments say.
#[derive(Default)]
struct Options {
    launch_bounds: Option<(u32, u32)>,
    dynamic_shared: Option<TokenStream>,
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
    if !tokens[..fn_pos].iter().any(|t| is_ident(t, "unsafe")) {
        return Err((
            tokens[fn_pos].span(),
            "a #[kernel] takes raw device pointers: declare it `pub unsafe fn`".into(),
        ));
    }
    let Some(TokenTree::Ident(name)) = tokens.get(fn_pos + 1) else {
        return Err((tokens[fn_pos].span(), "expected the kernel's name after `fn`".into()));
    };
    let name_str = name.to_string();
    let params_group = tokens[fn_pos + 2..].iter().find_map(|t| match t {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => Some(g.clone()),
        _ => None,
    });
    let Some(params_group) = params_group else {
        return Err((name.span(), "expected the kernel's parameter list".into()));
    };
    if let Some(TokenTree::Punct(p)) = tokens.get(fn_pos + 2)
        && p.as_char() == '<'
    {
        return Err((p.span(), "a #[kernel] cannot be generic: PTX entry points have one signature".into()));
    }
    let params = parse_params(&params_group)?;

    // Visibility: the tokens before `unsafe`/`fn` that are not attributes (`pub`, `pub(crate)`).
    let mut visibility: Vec<TokenTree> = Vec::new();
    let mut docs: Vec<TokenTree> = Vec::new();
    let mut i = 0;
    while i < fn_pos {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    if g.stream().into_iter().next().is_some_and(|t| is_ident(&t, "doc")) {
                        docs.extend(tokens[i..i + 2].iter().cloned());
                    }
                    i += 2;
                    continue;
                }
            }
            TokenTree::Ident(id) if id.to_string() == "pub" => {
                visibility.push(tokens[i].clone());
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1)
                    && g.delimiter() == Delimiter::Parenthesis
                {
                    visibility.push(tokens[i + 1].clone());
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }

    let mut out: Vec<TokenTree> = Vec::new();
    // Device build: the entry point itself, and the marker for the PTX builder.
    out.extend(attribute("cfg(target_arch = \"nvptx64\")"));
    out.extend(attribute("unsafe(no_mangle)"));
    out.extend(tokens[..fn_pos].iter().cloned());
    out.push(Ident::new("extern", Span::call_site()).into());
    out.push(Literal::string("ptx-kernel").into());
    out.extend(tokens[fn_pos..].iter().cloned());

    let bounds = options.launch_bounds.map(|(t, b)| format!(" launch_bounds {t} {b}")).unwrap_or_default();
    out.extend(parse(&format!(
        "#[cfg(target_arch = \"nvptx64\")] ::core::arch::global_asm!(::core::concat!(\"// kernel-abi: \", \
         ::core::module_path!(), \"::{name_str}{bounds}\"));"
    )));

    // Host build: the typed handle.
    out.extend(attribute("cfg(not(target_arch = \"nvptx64\"))"));
    out.extend(docs);
    out.extend(parse(&format!(
        "#[doc = \"\"] #[doc = \"Host handle: launch with `gpu.launch({name_str}, config, (arguments...))`; \
         the argument tuple is checked against the parameters at compile time.\"]"
    )));
    out.extend(attribute("allow(non_camel_case_types)"));
    out.extend(attribute("derive(Clone, Copy, Debug, Default, PartialEq, Eq)"));
    out.extend(visibility);
    out.extend(parse("struct"));
    out.push(TokenTree::Ident(name.clone()));
    out.extend(parse(";"));

    let mut param_types = TokenStream::new();
    let mut layouts = TokenStream::new();
    for p in &params {
        param_types.extend(p.ty.clone());
        param_types.extend(parse(","));
        layouts.extend(parse("::ptxkit_device::Param::of::<"));
        layouts.extend(p.ty.clone());
        layouts.extend(parse(&format!(">({:?}),", p.name)));
    }
    let launch_bounds = match options.launch_bounds {
        Some((t, b)) => {
            format!(
                "::core::option::Option::Some(::ptxkit_device::LaunchBounds {{ max_threads: {t}, min_blocks: {b} }})"
            )
        }
        None => "::core::option::Option::None".into(),
    };
    let dynamic_shared = options.dynamic_shared.unwrap_or_else(|| parse("0"));
    let mut body = TokenStream::new();
    body.extend(parse(&format!("const NAME: &'static str = {name_str:?}; type Params = ")));
    body.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, param_types))]);
    body.extend(parse("; const PARAMS: &'static [::ptxkit_device::Param] = &"));
    body.extend([TokenTree::Group(Group::new(Delimiter::Bracket, layouts))]);
    body.extend(parse(&format!(
        "; const LAUNCH_BOUNDS: ::core::option::Option<::ptxkit_device::LaunchBounds> = {launch_bounds}; \
         const DYNAMIC_SHARED_BYTES: u32 = "
    )));
    body.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, dynamic_shared))]);
    body.extend(parse(";"));
    out.extend(attribute("cfg(not(target_arch = \"nvptx64\"))"));
    out.extend(parse("impl ::ptxkit_device::Kernel for"));
    out.push(TokenTree::Ident(name.clone()));
    out.push(TokenTree::Group(Group::new(Delimiter::Brace, body)));

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

/// `launch_bounds(256, 2), dynamic_shared = BYTES`.
fn parse_options(attr: TokenStream) -> Result<Options, Failure> {
    let mut options = Options::default();
    for arg in split_commas(attr.into_iter().collect()) {
        let Some(TokenTree::Ident(key)) = arg.first() else {
            return Err((arg[0].span(), "expected `launch_bounds(...)` or `dynamic_shared = ...`".into()));
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
                let number = |tokens: &[TokenTree]| -> Result<u32, Failure> {
                    // A `$n:literal` from a `macro_rules!` arrives wrapped in an invisible group.
                    let tokens: Vec<TokenTree> = match tokens {
                        [TokenTree::Group(g)] if g.delimiter() == Delimiter::None => {
                            g.stream().into_iter().collect()
                        }
                        _ => tokens.to_vec(),
                    };
                    match tokens.as_slice() {
                        [TokenTree::Literal(l)] => {
                            l.to_string().trim_end_matches("u32").replace('_', "").parse::<u32>().map_err(
                                |_| {
                                    (
                                        l.span(),
                                        "launch bounds are whole numbers, e.g. `launch_bounds(256, 2)`"
                                            .into(),
                                    )
                                },
                            )
                        }
                        _ => Err((
                            group.span(),
                            "launch bounds are integer literals, e.g. `launch_bounds(256, 2)`".into(),
                        )),
                    }
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
                    format!(
                        "unknown #[kernel] argument `{other}`: expected `launch_bounds(...)` or `dynamic_shared = ...`"
                    ),
                ));
            }
        }
    }
    Ok(options)
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
