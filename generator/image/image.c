/*
 * image.c — the image --embed or --embed-source puts in the stubs, read
 * and told apart by content (the runtime's own sniffing, image_kind.h).
 */
#include "image/image.h"
#include "base/inputs.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#include "image_kind.h"   /* the runtime's, so both tell images apart alike */

int ks_image_read(const char *path, ks_image_blob *blob)
{
    size_t size;
    char *data = ks_read_file(path, &size);
    if (!data) {
        ks_error_at(path, 0, 0, "cannot read the image to embed: %s", ks_file_error());
        return -1;
    }
    blob->name = ks_basename(path);
    blob->data = (unsigned char *)data;
    blob->size = size;
    switch (ks__image_kind(data, size)) {
    case KS__BYTES_FATBIN:
        blob->kind = "FATBIN";
        break;
    case KS__BYTES_CUBIN:
        blob->kind = "CUBIN";
        break;
    case KS__BYTES_PTX:
        blob->kind = "PTX";
        blob->size = size + 1;  /* the driver reads PTX up to its NUL */
        break;
    default:
        ks_error_at(path, 0, 0, "not a kernel image: expected a fatbin, an ELF cubin or PTX "
                    "text from nvcc (-fatbin, -cubin or -ptx)");
        free(data);
        return -1;
    }
    return 0;
}

int ks_source_read(const char *path, ks_image_blob *blob)
{
    size_t size;
    char *data = ks_read_file(path, &size);
    if (!data) {
        ks_error_at(path, 0, 0, "cannot read: %s", ks_file_error());
        return -1;
    }
    if (memchr(data, '\0', size)) {
        ks_error_at(path, 0, 0, "contains a NUL byte; it cannot be embedded as source text");
        free(data);
        return -1;
    }
    blob->name = ks_basename(path);
    blob->data = (unsigned char *)data;
    blob->size = size + 1;  /* NVRTC reads the source up to its NUL */
    blob->kind = "SOURCE";
    return 0;
}
