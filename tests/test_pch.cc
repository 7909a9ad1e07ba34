// Compiles tests/test_pch.h once; every test reuses the result (tests/CMakeLists.txt).
