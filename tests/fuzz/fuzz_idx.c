/*
 * libFuzzer harness: the IDX reader (experiments/data/idx.c) on any bytes, plain or gzip. The first
 * byte chooses the image or the label reader; the rest is the file. Any crash, leak or sanitizer report
 * is a finding; a refused file is the expected outcome for most inputs.
 */
#include "data/idx.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1)
        return 0;
    fuzz_file_init("-ubyte");
    const char *path = fuzz_file_write(data + 1, n - 1);
    char msg[1024];
    if (data[0] & 1) {
        uint8_t *images = NULL;
        long count;
        int rows, cols;
        if (idx_load_images(path, &images, &count, &rows, &cols, msg, sizeof msg) == 0)
            free(images);
    } else {
        uint8_t *labels = NULL;
        long count;
        if (idx_load_labels(path, &labels, &count, 10, msg, sizeof msg) == 0)
            free(labels);
    }
    return 0;
}
