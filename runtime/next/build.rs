/// Builds `stint-runtime` for wasm with `next-spec`, in a wasm project of its own (the builder's
/// `wbuild/stint-runtime-next`), beside the runtime's own: the two never overwrite each other,
/// and they share every compiled dependency.
#[cfg(feature = "std")]
fn main() {
	substrate_wasm_builder::WasmBuilder::init_with_defaults().enable_feature("next-spec").build();
}

#[cfg(not(feature = "std"))]
fn main() {}
