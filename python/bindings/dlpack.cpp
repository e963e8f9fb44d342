// DLPack (0.6 ABI) both ways, zero-copy. Export: a DLManagedTensor whose manager_ctx holds a
// shared_ptr to the tensor's Storage, so the block stays out of the caching allocator's free
// lists until the consumer calls the deleter. Import: a Storage whose bytes' custom deleter
// calls the producer's DLManagedTensor deleter. Capsules follow the Python protocol: named
// "dltensor", renamed "used_dltensor" by the consumer, which then owns the tensor; the
// capsule's destructor deletes only a tensor nobody consumed.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "bindings.h"

namespace tessel::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";
// DLPack >= 0.8's kDLBool (one byte per element); the 0.6 header predates it.
constexpr uint8_t kDLBoolCode = 6;

// The devices whose evaluated values live in ordinary host memory.
bool is_host_device(const std::string& device) { return device == "cpu" || device == "reference"; }

DLDataType dl_dtype(DType t) {
  auto make = [](uint8_t code, int bits) {
    return DLDataType{code, static_cast<uint8_t>(bits), 1};
  };
  switch (dtype_kind(t)) {
    case DTypeKind::Bool:
      return make(kDLBoolCode, 8);
    case DTypeKind::Signed:
      return make(kDLInt, dtype_size(t) * 8);
    case DTypeKind::Unsigned:
      return make(kDLUInt, dtype_size(t) * 8);
    case DTypeKind::Complex:
      return make(kDLComplex, dtype_size(t) * 8);
    case DTypeKind::Float:
      if (t == DType::BF16) return make(kDLBfloat, 16);
      if (t == DType::F16 || t == DType::F32 || t == DType::F64)
        return make(kDLFloat, dtype_size(t) * 8);
      break;
  }
  throw_error(ErrorKind::DType, "[__dlpack__] DLPack has no ", dtype_name(t),
              " dtype; convert first, e.g. .astype(tessel.float32)");
}

DType tessel_dtype(DLDataType d) {
  if (d.lanes == 1) {
    auto pick = [&](std::initializer_list<DType> options) -> std::optional<DType> {
      for (DType t : options)
        if (dtype_size(t) * 8 == d.bits) return t;
      return std::nullopt;
    };
    std::optional<DType> t;
    switch (d.code) {
      case kDLInt:
        t = pick({DType::I8, DType::I16, DType::I32, DType::I64});
        break;
      case kDLUInt:
        t = pick({DType::U8, DType::U16, DType::U32, DType::U64});
        break;
      case kDLFloat:
        t = pick({DType::F16, DType::F32, DType::F64});
        break;
      case kDLBfloat:
        t = pick({DType::BF16});
        break;
      case kDLComplex:
        t = pick({DType::C64, DType::C128});
        break;
      case kDLBoolCode:
        t = pick({DType::Bool});
        break;
      default:
        break;
    }
    if (t) return *t;
  }
  throw_error(ErrorKind::DType, "[from_dlpack] DLPack dtype (code ", int(d.code), ", ", int(d.bits),
              " bits, ", d.lanes, " lanes) has no Tessel equivalent");
}

// ---- export ----

struct ExportContext {
  std::shared_ptr<Storage> storage;  // keeps the exported bytes alive
  std::vector<int64_t> shape, strides;
};

void delete_exported(DLManagedTensor* m) {
  delete static_cast<ExportContext*>(m->manager_ctx);
  delete m;
}

void capsule_destructor(PyObject* capsule) {
  // A consumer that took the tensor renamed the capsule and calls the deleter itself.
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (m && m->deleter) m->deleter(m);
}

py::capsule to_dlpack(const Tensor& t, const py::object& stream) {
  if (!stream.is_none())
    throw_error(ErrorKind::Value, "[__dlpack__] stream must be None for a host tensor (got ",
                py::repr(stream).cast<std::string>(), ")");
  if (!is_host_device(t.device()))
    throw_error(ErrorKind::Device, "[__dlpack__] tensors on device '", t.device(),
                "' cannot be exported; move to 'cpu' first (.to('cpu'))");
  DLDataType dtype = dl_dtype(t.dtype());
  HostTensor h = t.data();
  // Negative strides (a reversed view imported from numpy) are legal DLPack, but torch 1.13
  // aborts the process on them: such a view goes out as a contiguous copy.
  if (std::any_of(h.strides.begin(), h.strides.end(), [](int64_t s) { return s < 0; }))
    h = h.contiguous();
  auto ctx = std::make_unique<ExportContext>();
  ctx->storage = h.storage;
  ctx->shape = h.shape;
  ctx->strides = h.strides;
  auto m = std::make_unique<DLManagedTensor>();
  // The view's offset goes into `data` (byte_offset 0): some consumers ignore byte_offset.
  alignas(64) static uint8_t empty_data = 0;
  m->dl_tensor.data = h.storage ? static_cast<void*>(h.data()) : &empty_data;
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = h.rank();
  m->dl_tensor.dtype = dtype;
  m->dl_tensor.shape = ctx->shape.data();
  m->dl_tensor.strides = ctx->strides.data();
  m->dl_tensor.byte_offset = 0;
  m->manager_ctx = ctx.get();
  m->deleter = &delete_exported;
  PyObject* capsule = PyCapsule_New(m.get(), kCapsuleName, &capsule_destructor);
  if (!capsule) throw py::error_already_set();
  ctx.release();
  m.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

// ---- import ----

// Calls a producer's deleter when the last view of an imported Storage goes; the producer
// (numpy, for one) may need the GIL, and this may run on any thread.
void release_imported(DLManagedTensor* m) {
  if (!m->deleter) return;
  if (!Py_IsInitialized()) return;  // interpreter gone: leak rather than crash
  PyGILState_STATE gil = PyGILState_Ensure();
  m->deleter(m);
  PyGILState_Release(gil);
}

const char* device_type_name(int type) {
  switch (type) {
    case kDLCUDA:
      return "CUDA";
    case kDLCUDAManaged:
      return "CUDA managed";
    case kDLROCM:
      return "ROCm";
    case kDLOpenCL:
      return "OpenCL";
    case kDLVulkan:
      return "Vulkan";
    case kDLMetal:
      return "Metal";
    default:
      return "non-CPU";
  }
}

Tensor from_dlpack_capsule(const py::object& obj, const py::object& device) {
  PyObject* capsule = obj.ptr();
  if (!PyCapsule_CheckExact(capsule))
    throw_error(ErrorKind::Value, "[from_dlpack] expected a DLPack capsule, got ",
                py::str(py::type::of(obj)).cast<std::string>());
  if (PyCapsule_IsValid(capsule, kUsedCapsuleName))
    throw_error(ErrorKind::Value, "[from_dlpack] this DLPack capsule was already consumed");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (!m) {
    PyErr_Clear();
    throw_error(ErrorKind::Value, "[from_dlpack] the capsule is not named 'dltensor'");
  }
  const DLTensor& dl = m->dl_tensor;
  int dev = dl.device.device_type;
  if (dev != kDLCPU && dev != kDLCUDAHost && dev != kDLROCMHost)
    throw_error(ErrorKind::Device, "[from_dlpack] the tensor is in ", device_type_name(dev),
                " memory (DLPack device type ", dev,
                "); only CPU memory can be imported: copy it to the CPU first");
  std::string dev_name =
      device.is_none() ? Tensor::default_device() : py::str(device).cast<std::string>();
  if (!is_host_device(dev_name))
    throw_error(ErrorKind::Device, "[from_dlpack] device '", dev_name,
                "': DLPack imports go to a host device, 'cpu' or 'reference' (then use .to())");
  HostTensor h;
  h.dtype = tessel_dtype(dl.dtype);
  if (dl.ndim < 0 || (dl.ndim > 0 && !dl.shape))
    throw_error(ErrorKind::Value, "[from_dlpack] malformed DLTensor (ndim ", dl.ndim, ")");
  h.shape.assign(dl.shape, dl.shape + dl.ndim);
  for (int64_t d : h.shape)
    if (d < 0)
      throw_error(ErrorKind::Shape, "[from_dlpack] negative dimension in ", shape_str(h.shape));
  h.strides = dl.strides ? std::vector<int64_t>(dl.strides, dl.strides + dl.ndim)
                         : contiguous_strides(h.shape);
  const int64_t size = dtype_size(h.dtype);
  if (h.numel() == 0 || !dl.data) {
    if (h.numel() != 0)
      throw_error(ErrorKind::Value, "[from_dlpack] DLTensor of shape ", shape_str(h.shape),
                  " has no data");
    // Nothing to share: an empty tensor of our own; the producer's tensor is released now.
    HostTensor empty = HostTensor::empty(h.dtype, h.shape);
    PyCapsule_SetName(capsule, kUsedCapsuleName);
    release_imported(m);
    return Tensor(std::move(empty), dev_name);
  }
  // The storage spans every element the strides reach (negative strides reach below element 0).
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < h.rank(); ++i) {
    int64_t reach = (h.shape[i] - 1) * h.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  uint8_t* first = static_cast<uint8_t*>(dl.data) + dl.byte_offset;
  auto storage = std::make_shared<Storage>();
  storage->size = static_cast<size_t>((hi - lo + 1) * size);
  storage->bytes =
      std::shared_ptr<uint8_t[]>(first + lo * size, [m](uint8_t*) { release_imported(m); });
  // From here the storage owns the producer's tensor.
  PyCapsule_SetName(capsule, kUsedCapsuleName);
  h.offset = -lo;
  h.storage = std::move(storage);
  return Tensor(std::move(h), dev_name);
}

}  // namespace

void bind_dlpack(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor
      .def("__dlpack__", &to_dlpack, "stream"_a = py::none(),
           "A DLPack capsule sharing this tensor's memory (evaluates first). The capsule "
           "keeps the memory alive until its consumer releases it. The value is meant to be "
           "read: a consumer that writes to it changes this tensor too. A view with negative "
           "strides is exported as a contiguous copy.")
      .def(
          "__dlpack_device__",
          [](const Tensor& t) {
            if (!is_host_device(t.device()))
              throw_error(ErrorKind::Device, "[__dlpack_device__] device '", t.device(),
                          "' has no DLPack export; move to 'cpu' first");
            return py::make_tuple(static_cast<int>(kDLCPU), 0);
          },
          "(DLPack device type, device id): (1, 0), kDLCPU, for the host devices.")
      .def(
          "_data_ptr",
          [](const Tensor& t) -> uintptr_t {
            HostTensor h = t.data();
            return h.storage ? reinterpret_cast<uintptr_t>(h.data()) : 0;
          },
          "The address of element 0 (evaluates first); 0 when there is no storage. For tests "
          "of zero-copy interop.");
  m.def("_from_dlpack_capsule", &from_dlpack_capsule, "capsule"_a, "device"_a = py::none(),
        "A tensor sharing the memory of a DLPack capsule, which it consumes.");
}

}  // namespace tessel::python
