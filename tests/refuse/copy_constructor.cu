struct Handle { int fd; Handle(const Handle &o) : fd(o.fd) {} };
extern "C" __global__ void copyable(Handle h) {}
