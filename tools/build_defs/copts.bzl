"""Compiler options shared by every coil C++ target (one place, as abseil does)."""

COIL_COPTS = [
    "-Werror=return-type",
    "-Werror=switch",
    "-Wno-missing-field-initializers",
]
