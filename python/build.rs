//! PyO3's cfgs for the interpreter being built for (`Py_GIL_DISABLED` among them), so that the
//! reading of lists in place, which relies on the GIL, is left out where there is none.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
