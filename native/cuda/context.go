package cuda

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64
