//! End-to-end tests over sample-traces/ live in tests/tests/.
