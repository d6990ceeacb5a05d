// What every binding file of omnilearn._core shares: a Status or Result turned into the Python exception that fits.
// Stateless: thread-safe (each raises in the calling thread).
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <utility>

#include "omnilearn/base/status.h"

namespace omnilearn::python {

// Raises the Python exception that fits `status` (never returns for an error status).
inline void raise_if_error(const Status& status) {
  namespace py = pybind11;
  if (status.is_ok()) return;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kParseError:
      throw py::value_error(status.message());
    case StatusCode::kNotFound: {
      PyErr_SetString(PyExc_FileNotFoundError, status.message().c_str());
      throw py::error_already_set();
    }
    case StatusCode::kIoError:
    case StatusCode::kPermissionDenied: {
      PyErr_SetString(PyExc_OSError, status.message().c_str());
      throw py::error_already_set();
    }
    default:
      throw std::runtime_error(status.message());
  }
}

template <typename T>
T take(Result<T> result) {
  raise_if_error(result.status());
  return std::move(result).value();
}

// Binds the run layer (run_bindings.cpp): Scenario, StopRule, Manifest, RunSummary, RunRecorder and RunWriter.
void bind_run_layer(pybind11::module_& m);

}  // namespace omnilearn::python
