/* Files for every reader and writer of src/io: a whole input file in memory, an output that
 * replaces its target only when it was written completely, and messages that name the public
 * function and the file. Not installed. */
#ifndef SLA_IO_FILE_H
#define SLA_IO_FILE_H

#include <stddef.h>

#include "core/internal.h"

/** Reads a whole file into a new buffer (sla_malloc'ed, free with sla_free; one spare byte
 *  after the data). A directory is refused before anything is allocated.
 *  @return SLA_OK; SLA_EIO "func: cannot open|read 'path': reason" (a directory: "Is a
 *          directory"); SLA_ENOMEM "func: path: cannot allocate ...". */
sla_status io_load_file(const char *path, const char *func, char **buf, size_t *len);

/** A parser of a whole file in memory (text[0, len), not NUL-terminated); messages name
 *  `name` and `func`. */
typedef sla_status (*io_parse_fn)(const char *text, size_t len, const char *name,
                                  const char *func, sla_coo **out);

/** The readers' entry point: checks the arguments (SLA_EINVAL for a NULL out or path; *out is
 *  NULL on every error), io_load_file, then parse; allocation failures named by io_name_error. */
sla_status io_read_file(const char *path, const char *func, io_parse_fn parse, sla_coo **out);

/** For an allocation failure (SLA_ENOMEM with sla_malloc's or sla_calloc's message) inside a
 *  reader or writer: rewrites the message as "func: name: cannot allocate ...". Any other
 *  status and message pass through unchanged. Returns st. */
sla_status io_name_error(sla_status st, const char *func, const char *name);

/** An output file being written. A regular file, or a name that does not exist yet, is written
 *  to a new temporary file in the target's directory (".NAME.sla-XXXXXX", with the target's
 *  permission bits when it exists), which io_out_commit renames over the target: a write that
 *  fails leaves the old file as it was, and no partial file behind. A symbolic link is followed
 *  (the file it points to is replaced, the link stays). A device, FIFO or socket (/dev/null,
 *  /dev/stdout, a pipe) is written directly and never removed. A directory, or an existing
 *  file this process may not write, is refused as fopen(path, "w") would refuse it. */
typedef struct io_out {
    const char *path;        /**< the caller's name, for messages */
    const char *func;        /**< public function, for messages */
    char *target;            /**< the file that is replaced (symbolic links followed) */
    char *tmp;               /**< temporary file, NULL when writing directly */
    int fd;                  /**< open for writing, -1 once handed over or closed */
} io_out;

/** Opens the output (o->fd). @return SLA_OK; SLA_EIO "func: cannot create 'path': reason";
 *  SLA_ENOMEM. On failure nothing was created and *o needs no io_out_abort. */
sla_status io_out_open(io_out *o, const char *path, const char *func);

/** Name to write to when a library opens the file itself (RBio): the temporary file, or the
 *  target when writing directly. */
static inline const char *io_out_name(const io_out *o) { return o->tmp ? o->tmp : o->target; }

/** After everything was written and o->fd closed by the caller (set it to -1; a stdio stream
 *  or gzFile on it closes it): renames the temporary file over the target. Frees o.
 *  @return SLA_OK; SLA_EIO "func: cannot replace 'path': reason" (the temporary file is
 *  removed and the target is unchanged). */
sla_status io_out_commit(io_out *o);

/** After a failure: closes o->fd if still open, removes the temporary file (never the target),
 *  frees o. The current error message is kept. */
void io_out_abort(io_out *o);

#endif
