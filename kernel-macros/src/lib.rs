//! `#[kernel]`: the attribute that turns an ordinary `pub unsafe fn` into a GPU entry point.
//!
//! ```ignore
//! #[kernel]
//! pub unsafe fn scale(x: *mut f32, n: u32, a: f32) { ... }
//! ```
//! expands to
//! ```ignore
//! #[cfg(target_arch = "nvptx64")]
//! #[unsafe(no_mangle)]
//! pub unsafe extern "ptx-kernel" fn scale(x: *mut f32, n: u32, a: f32) { ... }
//! ```
//! so the kernel exists only in the PTX build (the host build of the `kernels` crate keeps just
//! the shared math), its symbol is its name, and it uses the PTX kernel calling convention.
//! This mirrors rust-cuda's `#[kernel]` from `cuda_std`, without that crate's nightly-2021
//! dependencies. It uses only `proc_macro`, so the device build needs no extra crates.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Marks a `pub unsafe fn` as a PTX kernel entry point (see the crate documentation).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return compile_error("#[kernel] takes no arguments");
    }
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let Some(fn_pos) = tokens.iter().position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "fn"))
    else {
        return compile_error("#[kernel] must be placed on a function");
    };
    let is_unsafe =
        tokens[..fn_pos].iter().any(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "unsafe"));
    if !is_unsafe {
        return compile_error("a #[kernel] takes raw device pointers: declare it `pub unsafe fn`");
    }

    let mut out: Vec<TokenTree> = Vec::new();
    out.extend(attribute("cfg(target_arch = \"nvptx64\")"));
    out.extend(attribute("unsafe(no_mangle)"));
    out.extend(tokens[..fn_pos].iter().cloned());
    out.push(Ident::new("extern", Span::call_site()).into());
    out.push(Literal::string("ptx-kernel").into());
    out.extend(tokens[fn_pos..].iter().cloned());
    out.into_iter().collect()
}

/// `#[<body>]` as tokens.
fn attribute(body: &str) -> Vec<TokenTree> {
    let inner: TokenStream = body.parse().expect("attribute body parses");
    vec![Punct::new('#', Spacing::Alone).into(), Group::new(Delimiter::Bracket, inner).into()]
}

fn compile_error(message: &str) -> TokenStream {
    format!("compile_error!({message:?});").parse().expect("compile_error! parses")
}
