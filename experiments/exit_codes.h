/* exit_codes.h: the exit codes of every speedlab command (docs/speedlab.md). */
#ifndef SL_EXIT_CODES_H
#define SL_EXIT_CODES_H

enum {
    SL_EXIT_OK = 0,
    SL_EXIT_FAILED = 1,      /* a case failed its check or its run, or the output could not be written */
    SL_EXIT_USAGE = 2,       /* unknown command, study, variant, size, parameter or a bad flag value */
    SL_EXIT_INTERRUPTED = 130,
};

#endif
