/*
 * native-sender: the lean engine's closed loops sent, read and timed in C
 * (LEAN_SENDER=native). A Node.js generator spends more CPU per request in its
 * event loop and socket calls than a C client spends in all (docs/generator.md);
 * here one thread with epoll does what the engine's pools do (http.js, ws.js),
 * and the engine (native.js) keeps everything else: it prepares the requests,
 * tells this program each window, and records every outcome this program
 * reports with the same recorder as the engine's other paths.
 *
 *   native-sender http HOST PORT TIMEOUT_MS
 *   native-sender ws HOST PORT TIMEOUT_MS CONNECTIONS HANDSHAKE ACCEPT
 *
 * http: one keep-alive HTTP/1.1 connection per lane (a closed-loop virtual
 * user), one request in flight on each; each request is a prepared buffer
 * written with one call. ws: CONNECTIONS WebSockets (HANDSHAKE: the upgrade
 * request's bytes; ACCEPT: the Sec-WebSocket-Accept it must answer), lane L on
 * connection L % CONNECTIONS, each request a masked text frame of
 * '{"jsonrpc":"2.0","id":' ID TAIL, its id counted per connection.
 *
 * Control, on stdin:
 *   "L\n"                                   one more lane
 *   "W K FROM STOP N F1 T1 .. FN TN BYTES\n" then BYTES of ring: window K, whose lanes send from FROM until STOP
 *                                           (epoch ms), inside the N slices [Fi, Ti) when N > 0; the ring is u32
 *                                           count, then per request u32 length and its bytes, sent in turn
 * Records, on stdout (little-endian; head: u8 type, u8 kind, u16 window, u32 ring index, f64 epoch ms):
 *   'S' a request sent;  'C' one answered or failed, then f64 latency ms and by kind: 0 a result; 1 a timeout;
 *   2 a failure, u32 length + its message; 3 an answer for the engine to judge, u32 HTTP status (0 over ws),
 *   u32 length + the body;  'T' the clock: everything before this instant is written;
 *   'D' the window's STOP has passed and none of its requests is in flight.
 * Exits when stdin closes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "native-sender writes little-endian records"
#endif

#define MAX_HEAD (64 * 1024)
#define MAX_MESSAGE (256u << 20)
#define SLOTS 16384 /* ws: ids in flight per connection at most (lanes are capped below it) */
#define MAX_LANES 8192
/* Records reach the engine at least this often (it applies them on their own clock), and at once when a window is
   done. Each flush wakes the engine's thread: fewer, larger ones cost it less per request (docs/generator.md). */
#define FLUSH_MS 250.0
#define FLUSH_BYTES (1024 * 1024)
#define RECONNECT_MIN_MS 100.0
#define RECONNECT_MAX_MS 2000.0

enum { K_OK = 0, K_TIMEOUT = 1, K_MESSAGE = 2, K_JUDGE = 3 };
enum { T_STDIN = 0, T_HTTP = 1, T_WS = 2 };

static void die(const char *what) {
  fprintf(stderr, "native-sender: %s: %s\n", what, strerror(errno));
  exit(1);
}

static double clock_ms(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
static double mono(void) { return clock_ms(CLOCK_MONOTONIC); }
static double wall(void) { return clock_ms(CLOCK_REALTIME); } /* Date.now()'s clock */

/* The instant of the event at hand: the monotonic clock read once per event (requests answered in it and those sent
   right after it share it), Date.now()'s clock derived from it with an offset read once per turn of the loop. */
static double now_mono, wall_offset;
static void tick_turn(void) {
  now_mono = mono();
  wall_offset = wall() - now_mono;
}
static void tick_event(void) { now_mono = mono(); }
static double now_wall(void) { return now_mono + wall_offset; }

struct buf {
  unsigned char *p;
  size_t len, cap;
};

static void reserve_buf(struct buf *b, size_t n) {
  if (b->len + n <= b->cap) return;
  size_t c = b->cap ? b->cap : 4096;
  while (c < b->len + n) c *= 2;
  b->p = realloc(b->p, c);
  if (!b->p) die("realloc");
  b->cap = c;
}
static void put(struct buf *b, const void *p, size_t n) {
  reserve_buf(b, n);
  memcpy(b->p + b->len, p, n);
  b->len += n;
}
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void consume(struct buf *b, size_t n) {
  memmove(b->p, b->p + n, b->len - n);
  b->len -= n;
}

/* ---- records to the engine ---- */

static struct buf out;
static double last_flush;

static void record(char type, int kind, int window, uint32_t idx, double t) {
  unsigned char h[16];
  uint16_t w = (uint16_t)window;
  h[0] = (unsigned char)type;
  h[1] = (unsigned char)kind;
  memcpy(h + 2, &w, 2);
  memcpy(h + 4, &idx, 4);
  memcpy(h + 8, &t, 8);
  put(&out, h, 16);
}

static void write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (fd == 1 && errno == EPIPE) exit(0); /* the engine is gone */
      die("write");
    }
    p += w;
    n -= (size_t)w;
  }
}

static void flush_records(void) {
  record('T', 0, 0, 0, now_wall()); /* never ahead of the records that follow it */
  write_all(1, out.p, out.len);
  out.len = 0;
  last_flush = mono();
}

/* ---- windows and lanes ---- */

struct window {
  int k;
  double from, stop;
  int nslices, slice; /* slice: the cursor, the first slice not yet over */
  double *slices;     /* [from, to) pairs */
  unsigned char *mem;
  uint32_t nring, next;
  unsigned char **req;
  uint32_t *reqlen;
  int inflight, done;
  struct window *older;
};

static struct window *cur; /* the newest; the older ones kept until their requests are answered */

struct hconn {
  int tag, fd, state; /* state: 0 none, 1 connecting, 2 open */
  struct lane *lane;
  const unsigned char *wp; /* the request's bytes not yet written */
  size_t wleft;
  struct buf in, body;
  int head, status, chunked, close; /* head: its end read */
  long clen;
  size_t body_at, pos;
};

struct lane {
  int n, busy, ready; /* n: 1, 2, ... as the lanes came */
  struct window *w;
  uint32_t idx, id;
  double t0; /* mono, when sent */
  struct wconn *c;
  struct hconn h;
};

static struct lane **lanes;
static int nlanes;
static int *readyq;
static int nready;

struct wconn {
  int tag, fd, state; /* 0 down, 1 connecting, 2 handshaking, 3 open */
  double since, retry_at, retry_ms;
  struct buf in, outq, msg;
  int msg_op, want_out;
  uint32_t next_id;
  struct {
    uint32_t id;
    int lane; /* its index + 1, 0 when free */
  } slot[SLOTS];
};

static int ws_mode, ep, nconns;
static struct wconn *conns;
static int *dirty; /* ws: the connections with frames to write after this event */
static int ndirty;
static double timeout_ms;
static const char *handshake, *accept_value;
static struct sockaddr_storage addr;
static socklen_t addrlen;
static int stdin_tag = T_STDIN;

static void push_ready(int li) {
  struct lane *l = lanes[li];
  if (l->ready) return;
  l->ready = 1;
  readyq[nready++] = li;
}

/* Whether the current window lets a lane send at wall-clock instant t. */
static int sending_at(double t) {
  struct window *w = cur;
  if (!w || t < w->from || t >= w->stop) return 0;
  if (!w->nslices) return 1;
  while (w->slice < w->nslices && t >= w->slices[2 * w->slice + 1]) w->slice++;
  return w->slice < w->nslices && t >= w->slices[2 * w->slice];
}

/* The next instant (wall ms) at which lanes not sending now may send; 0 for none. */
static double next_gate(double t) {
  struct window *w = cur;
  if (!w || t >= w->stop) return 0;
  if (!w->nslices) return t < w->from ? w->from : 0;
  for (int i = w->slice; i < w->nslices; i++) {
    double f = w->slices[2 * i] < w->from ? w->from : w->slices[2 * i];
    if (f > t && f < w->stop) return f;
  }
  return 0;
}

static const char *errno_name(int e) {
  switch (e) {
    case ECONNREFUSED: return "ECONNREFUSED";
    case ECONNRESET: return "ECONNRESET";
    case EPIPE: return "EPIPE";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ENETUNREACH: return "ENETUNREACH";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ECONNABORTED: return "ECONNABORTED";
    default: return strerror(e);
  }
}

/* The lane's request is over: its record, and the lane ready for the next. */
static void complete(struct lane *l, int kind, int status, const unsigned char *body, size_t blen, const char *msg) {
  double lat = now_mono - l->t0;
  record('C', kind, l->w->k, l->idx, now_wall());
  put(&out, &lat, 8);
  if (kind == K_MESSAGE) {
    size_t n = strlen(msg);
    put_u32(&out, (uint32_t)n);
    put(&out, msg, n);
  } else if (kind == K_JUDGE) {
    put_u32(&out, (uint32_t)status);
    put_u32(&out, (uint32_t)blen);
    put(&out, body, blen);
  }
  l->busy = 0;
  l->w->inflight--;
  push_ready(l->n - 1);
}

/* ---- sockets ---- */

static int open_socket(int *fd) {
  *fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (*fd < 0) return errno;
  int one = 1;
  setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(*fd, (struct sockaddr *)&addr, addrlen) && errno != EINPROGRESS) {
    int e = errno;
    close(*fd);
    *fd = -1;
    return e;
  }
  return 0;
}

static void watch(int fd, void *tag, uint32_t events, int op) {
  struct epoll_event ev = {.events = events, .data.ptr = tag};
  if (epoll_ctl(ep, op, fd, &ev)) die("epoll_ctl");
}

/* ---- HTTP ---- */

static void http_close(struct hconn *h) {
  if (h->fd >= 0) close(h->fd); /* closing drops it from epoll */
  h->fd = -1;
  h->state = 0;
  h->in.len = 0;
  h->head = 0;
}

static void http_fail(struct hconn *h, const char *msg) {
  struct lane *l = h->lane;
  http_close(h);
  if (l->busy) complete(l, K_MESSAGE, 0, NULL, 0, msg);
}

static void http_write(struct hconn *h) {
  while (h->wleft) {
    ssize_t w = write(h->fd, h->wp, h->wleft);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        watch(h->fd, h, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        return;
      }
      http_fail(h, errno_name(errno));
      return;
    }
    h->wp += w;
    h->wleft -= (size_t)w;
  }
}

static void http_send(struct lane *l) {
  struct hconn *h = &l->h;
  h->wp = l->w->req[l->idx];
  h->wleft = l->w->reqlen[l->idx];
  if (h->state == 2) return http_write(h);
  int e = open_socket(&h->fd);
  if (e) return complete(l, K_MESSAGE, 0, NULL, 0, errno_name(e));
  h->state = 1;
  watch(h->fd, h, EPOLLIN | EPOLLOUT, EPOLL_CTL_ADD);
}

/* The value of header `name` (lower case, with its colon) in the lower-cased head, or NULL. */
static const char *header(const char *head, const char *name) {
  char key[64];
  snprintf(key, sizeof(key), "\r\n%s", name);
  const char *p = strstr(head, key);
  if (!p) return NULL;
  p += strlen(key);
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* Reads the head of a response: 1 when read, 0 when more bytes are needed, -1 (and the failure) for bad bytes. */
static int http_head(struct hconn *h) {
  unsigned char *end = memmem(h->in.p, h->in.len, "\r\n\r\n", 4);
  if (!end) {
    if (h->in.len > MAX_HEAD) return http_fail(h, "response head larger than 64 KiB"), -1;
    return 0;
  }
  size_t n = (size_t)(end - h->in.p);
  char *head = malloc(n + 3);
  if (!head) die("malloc");
  for (size_t i = 0; i < n; i++) head[i] = (char)((h->in.p[i] >= 'A' && h->in.p[i] <= 'Z') ? h->in.p[i] + 32 : h->in.p[i]);
  memcpy(head + n, "\r\n", 3); /* so that the last header ends as the others do */
  char msg[200];
  int ok = 1;
  if (strncmp(head, "http/1.", 7) || n < 12) {
    snprintf(msg, sizeof(msg), "not an HTTP/1.x response: \"%.40s\"", head);
    ok = 0;
  } else {
    h->status = atoi(head + 9);
    if (h->status < 100 || h->status > 599) {
      snprintf(msg, sizeof(msg), "bad HTTP status line: \"%.*s\"", (int)strcspn(head, "\r"), head);
      ok = 0;
    }
  }
  if (ok) {
    const char *c = header(head, "connection:");
    h->close = !strncmp(head, "http/1.0", 8) ? !(c && !strncmp(c, "keep-alive", 10)) : (c && !strncmp(c, "close", 5));
    const char *te = header(head, "transfer-encoding:");
    const char *cl = header(head, "content-length:");
    h->chunked = 0;
    h->clen = -1;
    if (te && memmem(te, strcspn(te, "\r"), "chunked", 7)) h->chunked = 1;
    else if (cl && *cl >= '0' && *cl <= '9') h->clen = atol(cl);
    else if (h->status == 204 || h->status == 304 || h->status < 200) h->clen = 0;
    else {
      snprintf(msg, sizeof(msg), "response has neither Content-Length nor chunked transfer coding");
      ok = 0;
    }
  }
  free(head);
  if (!ok) return http_fail(h, msg), -1;
  h->head = 1;
  h->body_at = h->pos = n + 4;
  h->body.len = 0;
  return 1;
}

/* The engine's fast test: a "result" key among the first 48 bytes with no "error" before it. */
static int result_first(const unsigned char *b, size_t n) {
  size_t r = 0;
  for (; r < 48 && r + 8 <= n; r++)
    if (!memcmp(b + r, "\"result\"", 8)) break;
  if (r >= 48 || r + 8 > n) return 0;
  for (size_t e = 0; e <= r && e + 7 <= n; e++)
    if (!memcmp(b + e, "\"error\"", 7)) return 0;
  return 1;
}

static void http_answered(struct hconn *h, const unsigned char *body, size_t blen) {
  struct lane *l = h->lane;
  int close_after = h->close;
  int ok = h->status >= 200 && h->status < 300 && result_first(body, blen);
  if (ok) complete(l, K_OK, 0, NULL, 0, NULL);
  else complete(l, K_JUDGE, h->status, body, blen, NULL);
  h->head = 0;
  h->in.len = 0; /* as http.js: what follows a chunked answer is dropped, a sized one must end the bytes */
  if (close_after) http_close(h);
}

static void http_parse(struct hconn *h) {
  if (!h->lane->busy) return http_close(h); /* bytes no request asked for */
  if (!h->head && http_head(h) <= 0) return;
  if (!h->chunked) {
    size_t end = h->body_at + (size_t)h->clen;
    if (h->in.len < end) return;
    if (h->in.len > end) return http_fail(h, "bytes after the response (the server answered a request not sent)");
    return http_answered(h, h->in.p + h->body_at, (size_t)h->clen);
  }
  for (;;) {
    unsigned char *eol = memmem(h->in.p + h->pos, h->in.len - h->pos, "\r\n", 2);
    if (!eol) return;
    char *after;
    long size = strtol((const char *)h->in.p + h->pos, &after, 16);
    if (after == (char *)h->in.p + h->pos || size < 0) return http_fail(h, "bad chunk size in a chunked response");
    size_t e = (size_t)(eol - h->in.p);
    if (size == 0) {
      if (!memmem(h->in.p + e, h->in.len - e, "\r\n\r\n", 4)) return;
      return http_answered(h, h->body.p, h->body.len);
    }
    size_t data_end = e + 2 + (size_t)size;
    if (h->in.len < data_end + 2) return;
    put(&h->body, h->in.p + e + 2, (size_t)size);
    h->pos = data_end + 2;
  }
}

static void http_event(struct hconn *h, uint32_t events) {
  if (h->state == 1) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) return http_fail(h, errno_name(err));
    h->state = 2;
    watch(h->fd, h, EPOLLIN, EPOLL_CTL_MOD);
    if (h->wleft) http_write(h);
    return;
  }
  if (h->state != 2) return;
  if ((events & EPOLLOUT) && h->wleft) {
    http_write(h);
    if (h->state != 2) return;
    if (!h->wleft) watch(h->fd, h, EPOLLIN, EPOLL_CTL_MOD);
  }
  if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  for (;;) {
    reserve_buf(&h->in, 64 * 1024);
    ssize_t r = read(h->fd, h->in.p + h->in.len, h->in.cap - h->in.len);
    if (r > 0) {
      int full = h->in.len + (size_t)r == h->in.cap;
      h->in.len += (size_t)r;
      http_parse(h);
      if (h->state != 2 || !full) return; /* one read per event unless it filled the buffer, as wrk does */
      continue;
    }
    if (r == 0) return http_fail(h, "connection closed by the server");
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return http_fail(h, errno_name(errno));
    return;
  }
}

/* ---- WebSocket ---- */

static unsigned char mask_pool[8192];
static size_t mask_at = sizeof(mask_pool);

static const unsigned char *mask_key(void) {
  if (mask_at + 4 > sizeof(mask_pool)) {
    if (getrandom(mask_pool, sizeof(mask_pool), 0) != (ssize_t)sizeof(mask_pool)) die("getrandom");
    mask_at = 0;
  }
  mask_at += 4;
  return mask_pool + mask_at - 4;
}

/* One masked frame of the given opcode around the n bytes of parts (up to three pieces) into b. */
static void ws_frame(struct buf *b, int opcode, const unsigned char **parts, const size_t *lens, int nparts) {
  size_t len = 0;
  for (int i = 0; i < nparts; i++) len += lens[i];
  reserve_buf(b, len + 14);
  unsigned char *o = b->p + b->len;
  size_t at = 0;
  o[at++] = (unsigned char)(0x80 | opcode);
  if (len < 126) o[at++] = (unsigned char)(0x80 | len);
  else if (len < 65536) {
    o[at++] = 0x80 | 126;
    o[at++] = (unsigned char)(len >> 8);
    o[at++] = (unsigned char)len;
  } else {
    o[at++] = 0x80 | 127;
    for (int i = 7; i >= 0; i--) o[at++] = (unsigned char)(len >> (8 * i));
  }
  const unsigned char *k = mask_key();
  memcpy(o + at, k, 4);
  at += 4;
  size_t j = 0;
  for (int i = 0; i < nparts; i++)
    for (size_t x = 0; x < lens[i]; x++, j++) o[at + j] = parts[i][x] ^ k[j & 3];
  b->len += at + len;
}

static void ws_down(struct wconn *c, const char *msg);

/* c has frames to write once the event at hand is handled (listed once until then). */
static void mark_dirty(struct wconn *c) {
  if (c->want_out) return;
  c->want_out = 1;
  dirty[ndirty++] = (int)(c - conns);
}

static void ws_flush(struct wconn *c) {
  while (c->state == 3 && c->outq.len) {
    ssize_t w = write(c->fd, c->outq.p, c->outq.len);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        watch(c->fd, c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        return;
      }
      char msg[160];
      snprintf(msg, sizeof(msg), "WebSocket: %s", errno_name(errno));
      return ws_down(c, msg);
    }
    consume(&c->outq, (size_t)w);
  }
}

static void ws_connect(struct wconn *c) {
  int e = open_socket(&c->fd);
  c->since = mono();
  if (e) {
    char msg[160];
    snprintf(msg, sizeof(msg), "WebSocket: %s", errno_name(e));
    c->state = 1; /* ws_down schedules the next attempt */
    return ws_down(c, msg);
  }
  c->state = 1;
  watch(c->fd, c, EPOLLIN | EPOLLOUT, EPOLL_CTL_ADD);
}

/* The connection is down: its requests fail with msg, the next attempt after a pause (doubling up to 2 s). */
static void ws_down(struct wconn *c, const char *msg) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  c->state = 0;
  c->in.len = c->outq.len = c->msg.len = 0;
  for (int i = 0; i < SLOTS; i++)
    if (c->slot[i].lane) {
      struct lane *l = lanes[c->slot[i].lane - 1];
      c->slot[i].lane = 0;
      if (l->busy) complete(l, K_MESSAGE, 0, NULL, 0, msg);
    }
  c->retry_at = mono() + c->retry_ms;
  c->retry_ms = c->retry_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : c->retry_ms * 2;
}

/* id in decimal into d (no terminating zero); its length. */
static int decimal(char *d, uint32_t id) {
  char r[10];
  int n = 0;
  do r[n++] = (char)('0' + id % 10); while (id /= 10);
  for (int i = 0; i < n; i++) d[i] = r[n - 1 - i];
  return n;
}

static void ws_send(struct lane *l) {
  struct wconn *c = &conns[l->n % nconns];
  for (int k = 1; c->state != 3 && k < nconns; k++)
    if (conns[k % nconns].state == 3) c = &conns[k % nconns];
  uint32_t id = c->next_id++;
  if (c->slot[id & (SLOTS - 1)].lane) { /* an id still in flight SLOTS requests later: cannot be told apart */
    complete(l, K_MESSAGE, 0, NULL, 0, "WebSocket: too many requests in flight on one connection");
    return;
  }
  c->slot[id & (SLOTS - 1)].id = id;
  c->slot[id & (SLOTS - 1)].lane = l->n;
  l->c = c;
  l->id = id;
  char digits[12];
  int nd = decimal(digits, id);
  static const unsigned char prefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  const unsigned char *parts[3] = {prefix, (unsigned char *)digits, l->w->req[l->idx]};
  size_t lens[3] = {sizeof(prefix) - 1, (size_t)nd, l->w->reqlen[l->idx]};
  ws_frame(&c->outq, 1, parts, lens, 3); /* written once this event is handled (a closed connection keeps it) */
  mark_dirty(c);
}

/* A string's end (the index after its closing quote) from its opening quote at i, or 0. */
static size_t skip_string(const unsigned char *p, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (p[i] == '\\') i++;
    else if (p[i] == '"') return i + 1;
  }
  return 0;
}

static size_t skip_ws(const unsigned char *p, size_t n, size_t i) {
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) i++;
  return i;
}

/* A JSON value's end from its start at i, or 0. */
static size_t skip_value(const unsigned char *p, size_t n, size_t i) {
  if (i >= n) return 0;
  if (p[i] == '"') return skip_string(p, n, i);
  if (p[i] == '{' || p[i] == '[') {
    int depth = 0;
    for (; i < n; i++) {
      if (p[i] == '"') {
        i = skip_string(p, n, i);
        if (!i) return 0;
        i--;
      } else if (p[i] == '{' || p[i] == '[') depth++;
      else if ((p[i] == '}' || p[i] == ']') && --depth == 0) return i + 1;
    }
    return 0;
  }
  while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && p[i] != ' ' && p[i] != '\n' && p[i] != '\r' &&
         p[i] != '\t')
    i++;
  return i;
}

/* An answer's top-level id as the engine reads one (a whole number, or a string of up to 15 digits); 0 if none. */
static int top_level_id(const unsigned char *p, size_t n, uint64_t *id) {
  size_t i = skip_ws(p, n, 0);
  if (i >= n || p[i] != '{') return 0;
  for (i++;;) {
    i = skip_ws(p, n, i);
    if (i >= n || p[i] != '"') return 0;
    size_t ks = i + 1, ke = skip_string(p, n, i);
    if (!ke) return 0;
    i = skip_ws(p, n, ke);
    if (i >= n || p[i] != ':') return 0;
    i = skip_ws(p, n, i + 1);
    if (ke - 1 - ks == 2 && p[ks] == 'i' && p[ks + 1] == 'd') {
      int quoted = i < n && p[i] == '"';
      size_t d = i + quoted, e = d;
      uint64_t v = 0;
      while (e < n && e - d < 16 && p[e] >= '0' && p[e] <= '9') v = v * 10 + (p[e++] - '0');
      if (e == d || e - d > 15) return 0;
      if (quoted ? (e >= n || p[e] != '"') : (e < n && (p[e] == '.' || p[e] == 'e' || p[e] == 'E'))) return 0;
      *id = v;
      return 1;
    }
    i = skip_value(p, n, i);
    if (!i) return 0;
    i = skip_ws(p, n, i);
    if (i >= n || p[i] != ',') return 0;
    i++;
  }
}

static void ws_answer(struct wconn *c, const unsigned char *m, size_t n) {
  static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  const size_t pl = sizeof(prefix) - 1;
  uint64_t id = 0;
  int fast = 0;
  if (n > pl && !memcmp(m, prefix, pl)) {
    size_t i = pl;
    while (i < n && i < pl + 15 && m[i] >= '0' && m[i] <= '9') id = id * 10 + (m[i++] - '0');
    fast = i > pl && i + 10 <= n && !memcmp(m + i, ",\"result\":", 10);
  }
  if (!fast && !top_level_id(m, n, &id)) return; /* no usable id: no request to match it to */
  if (id > UINT32_MAX) return;
  int s = (int)(id & (SLOTS - 1));
  if (!c->slot[s].lane || c->slot[s].id != (uint32_t)id) return; /* timed out already, or never sent */
  struct lane *l = lanes[c->slot[s].lane - 1];
  c->slot[s].lane = 0;
  if (!l->busy) return;
  if (fast) complete(l, K_OK, 0, NULL, 0, NULL);
  else complete(l, K_JUDGE, 0, m, n, NULL);
}

static void ws_handshake(struct wconn *c) {
  unsigned char *end = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
  if (!end) {
    if (c->in.len > 16 * 1024) ws_down(c, "WebSocket: WebSocket handshake answer larger than 16 KiB");
    return;
  }
  size_t n = (size_t)(end - c->in.p);
  char *head = malloc(n + 3);
  if (!head) die("malloc");
  memcpy(head, c->in.p, n);
  memcpy(head + n, "\r\n", 3);
  char msg[200] = "";
  if (strncmp(head, "HTTP/1.1 101", 12)) {
    snprintf(msg, sizeof(msg), "WebSocket: WebSocket handshake refused: %.120s", n ? head : "no status line");
    msg[strcspn(msg, "\r")] = 0;
  } else {
    for (char *p = head; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p += 32;
    const char *a = header(head, "sec-websocket-accept:");
    /* the accept value is base64, compared as sent: find it in the original head */
    size_t off = a ? (size_t)(a - head) : 0;
    size_t alen = strlen(accept_value);
    if (!a || strncmp((const char *)c->in.p + off, accept_value, alen) ||
        !strchr("\r \t", c->in.p[off + alen]))
      snprintf(msg, sizeof(msg), "WebSocket: WebSocket handshake: wrong Sec-WebSocket-Accept");
    else if (header(head, "sec-websocket-extensions:"))
      snprintf(msg, sizeof(msg), "WebSocket: WebSocket handshake: an extension not asked for");
  }
  free(head);
  if (*msg) return ws_down(c, msg);
  consume(&c->in, n + 4);
  c->state = 3;
  c->retry_ms = RECONNECT_MIN_MS;
  watch(c->fd, c, EPOLLIN, EPOLL_CTL_MOD);
  ws_flush(c); /* the requests queued while it opened */
}

/* The whole frames at the start of c->in: answers matched, pings answered, a close frame closes. */
static void ws_frames(struct wconn *c) {
  size_t at = 0;
  while (c->state == 3 && c->in.len - at >= 2) {
    unsigned char b0 = c->in.p[at], b1 = c->in.p[at + 1];
    uint64_t len = b1 & 0x7f;
    size_t head = 2;
    if (len == 126) {
      if (c->in.len - at < 4) break;
      len = ((uint64_t)c->in.p[at + 2] << 8) | c->in.p[at + 3];
      head = 4;
    } else if (len == 127) {
      if (c->in.len - at < 10) break;
      len = 0;
      for (int i = 0; i < 8; i++) len = (len << 8) | c->in.p[at + 2 + i];
      head = 10;
    }
    char msg[160];
    int opcode = b0 & 0x0f;
    if (b1 & 0x80) return ws_down(c, "WebSocket: WebSocket: a masked frame from the server");
    if (b0 & 0x70) return ws_down(c, "WebSocket: WebSocket: reserved bits set (no extension was agreed)");
    if (len > MAX_MESSAGE) {
      snprintf(msg, sizeof(msg), "WebSocket: WebSocket: a frame of %llu bytes", (unsigned long long)len);
      return ws_down(c, msg);
    }
    if (c->in.len - at < head + len) {
      reserve_buf(&c->in, head + len); /* room for the rest of the frame */
      break;
    }
    unsigned char *payload = c->in.p + at + head;
    at += head + (size_t)len;
    if (opcode == 0 || opcode == 1 || opcode == 2) {
      if (opcode == 0 && !c->msg_op) return ws_down(c, "WebSocket: WebSocket: a continuation frame out of place");
      if (opcode && c->msg_op) return ws_down(c, "WebSocket: WebSocket: a new message inside a fragmented one");
      if ((b0 & 0x80) && opcode) {
        ws_answer(c, payload, (size_t)len);
        continue;
      }
      if (opcode) c->msg_op = opcode;
      if (c->msg.len + len > MAX_MESSAGE) return ws_down(c, "WebSocket: WebSocket: a message over 256 MiB");
      put(&c->msg, payload, (size_t)len);
      if (b0 & 0x80) {
        ws_answer(c, c->msg.p, c->msg.len);
        c->msg.len = 0;
        c->msg_op = 0;
      }
    } else if (opcode == 9) {
      const unsigned char *parts[1] = {payload};
      size_t lens[1] = {(size_t)len};
      ws_frame(&c->outq, 10, parts, lens, 1);
      mark_dirty(c);
    } else if (opcode == 8) {
      int code = len >= 2 ? (payload[0] << 8) | payload[1] : 1005;
      const unsigned char *parts[1] = {payload};
      size_t lens[1] = {len >= 2 ? 2 : 0};
      ws_frame(&c->outq, 8, parts, lens, 1);
      ws_flush(c);
      snprintf(msg, sizeof(msg), "WebSocket closed (code %d)", code);
      return ws_down(c, msg);
    } else if (opcode != 10) {
      snprintf(msg, sizeof(msg), "WebSocket: WebSocket: unknown opcode %d", opcode);
      return ws_down(c, msg);
    }
  }
  if (c->state == 3) consume(&c->in, at);
}

static void ws_event(struct wconn *c, uint32_t events) {
  if (c->state == 1) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    char msg[160];
    if (err) {
      snprintf(msg, sizeof(msg), "WebSocket: %s", errno_name(err));
      return ws_down(c, msg);
    }
    size_t n = strlen(handshake);
    if (write(c->fd, handshake, n) != (ssize_t)n) { /* a fresh socket takes a few hundred bytes at once */
      snprintf(msg, sizeof(msg), "WebSocket: %s", errno_name(errno));
      return ws_down(c, msg);
    }
    c->state = 2;
    watch(c->fd, c, EPOLLIN, EPOLL_CTL_MOD);
    return;
  }
  if (c->state < 2) return;
  if (events & EPOLLOUT) {
    ws_flush(c);
    if (c->state == 3 && !c->outq.len) watch(c->fd, c, EPOLLIN, EPOLL_CTL_MOD);
  }
  if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  for (;;) {
    reserve_buf(&c->in, 64 * 1024);
    ssize_t r = read(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len);
    if (r > 0) {
      int full = c->in.len + (size_t)r == c->in.cap;
      c->in.len += (size_t)r;
      if (c->state == 2) ws_handshake(c);
      if (c->state == 3) ws_frames(c);
      if (c->state < 2 || !full) return; /* one read per event unless it filled the buffer */
      continue;
    }
    if (r == 0) return ws_down(c, "WebSocket closed (code 1006)");
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return;
    char msg[160];
    snprintf(msg, sizeof(msg), "WebSocket: %s", errno_name(errno));
    return ws_down(c, msg);
  }
}

/* ---- control from the engine ---- */

static struct buf ctl;

static void add_lane(void) {
  if (nlanes >= MAX_LANES) {
    fprintf(stderr, "native-sender: more than %d lanes\n", MAX_LANES);
    exit(2);
  }
  struct lane *l = calloc(1, sizeof(*l));
  if (!l) die("calloc");
  l->n = nlanes + 1;
  l->h.tag = T_HTTP;
  l->h.fd = -1;
  l->h.lane = l;
  lanes[nlanes++] = l;
  push_ready(l->n - 1);
}

static void bad_control(const char *why) {
  fprintf(stderr, "native-sender: bad control message: %s\n", why);
  exit(2);
}

/* A window message whose ring has arrived whole: the newest window. Returns the bytes used, 0 while incomplete. */
static size_t take_window(const char *line, size_t line_len) {
  struct window *w = calloc(1, sizeof(*w));
  if (!w) die("calloc");
  char *p = (char *)line + 2, *e;
  w->k = (int)strtol(p, &e, 10);
  w->from = strtod(e, &e);
  w->stop = strtod(e, &e);
  w->nslices = (int)strtol(e, &e, 10);
  if (w->nslices < 0 || w->nslices > 100000) bad_control("slices");
  w->slices = calloc((size_t)w->nslices * 2 + 1, sizeof(double));
  for (int i = 0; i < 2 * w->nslices; i++) w->slices[i] = strtod(e, &e);
  size_t bytes = (size_t)strtoull(e, &e, 10);
  if (ctl.len < line_len + bytes) {
    free(w->slices);
    free(w);
    return 0;
  }
  w->mem = malloc(bytes ? bytes : 1);
  memcpy(w->mem, ctl.p + line_len, bytes);
  if (bytes < 4) bad_control("ring");
  memcpy(&w->nring, w->mem, 4);
  if (!w->nring) bad_control("an empty ring");
  w->req = calloc(w->nring, sizeof(*w->req));
  w->reqlen = calloc(w->nring, sizeof(*w->reqlen));
  size_t at = 4;
  for (uint32_t i = 0; i < w->nring; i++) {
    if (at + 4 > bytes) bad_control("ring");
    memcpy(&w->reqlen[i], w->mem + at, 4);
    at += 4;
    if (at + w->reqlen[i] > bytes) bad_control("ring");
    w->req[i] = w->mem + at;
    at += w->reqlen[i];
  }
  w->older = cur;
  cur = w;
  for (int i = 0; i < nlanes; i++) push_ready(i);
  return line_len + bytes;
}

static void read_control(void) {
  for (;;) {
    reserve_buf(&ctl, 64 * 1024);
    ssize_t r = read(0, ctl.p + ctl.len, ctl.cap - ctl.len);
    if (r > 0) {
      ctl.len += (size_t)r;
      continue;
    }
    if (r == 0) { /* the engine is done with us */
      flush_records();
      exit(0);
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) break;
    die("read stdin");
  }
  for (;;) {
    unsigned char *nl = memchr(ctl.p, '\n', ctl.len);
    if (!nl) return;
    size_t line_len = (size_t)(nl - ctl.p) + 1;
    if (ctl.p[0] == 'L') {
      add_lane();
      consume(&ctl, line_len);
    } else if (ctl.p[0] == 'W') {
      ctl.p[line_len - 1] = 0;
      size_t used = take_window((const char *)ctl.p, line_len);
      ctl.p[line_len - 1] = '\n';
      if (!used) return;
      consume(&ctl, used);
    } else
      bad_control("unknown");
  }
}

/* ---- the loop ---- */

static void send_lane(struct lane *l) {
  l->busy = 1;
  l->w = cur;
  l->idx = cur->next;
  cur->next = (cur->next + 1) % cur->nring;
  cur->inflight++;
  l->t0 = now_mono;
  record('S', 0, cur->k, l->idx, now_wall());
  if (ws_mode) ws_send(l);
  else http_send(l);
}

/* Windows whose stop has passed with nothing in flight: 'D', once; their rings freed once a newer one is current. */
static void windows_done(double t) {
  for (struct window **pw = &cur; *pw;) {
    struct window *w = *pw;
    if (!w->done && w->inflight == 0 && t >= w->stop) {
      w->done = 1;
      record('D', 0, w->k, 0, t);
      flush_records(); /* the engine is waiting for it */
    }
    if (w->done && w != cur) {
      *pw = w->older;
      free(w->mem);
      free(w->req);
      free(w->reqlen);
      free(w->slices);
      free(w);
      continue;
    }
    pw = &w->older;
  }
}

/* Whether a window is still under way: the engine then hears the clock every FLUSH_MS, otherwise only records. */
static int under_way(void) {
  for (struct window *w = cur; w; w = w->older)
    if (!w->done) return 1;
  return 0;
}

static void sweep(double now) {
  double before = now - timeout_ms;
  for (int i = 0; i < nlanes; i++) {
    struct lane *l = lanes[i];
    if (!l->busy || l->t0 >= before) continue;
    if (ws_mode) {
      int s = (int)(l->id & (SLOTS - 1));
      if (l->c->slot[s].lane == l->n) l->c->slot[s].lane = 0;
      complete(l, K_TIMEOUT, 0, NULL, 0, NULL);
    } else {
      http_close(&l->h);
      complete(l, K_TIMEOUT, 0, NULL, 0, NULL);
    }
  }
  if (!ws_mode) return;
  for (int i = 0; i < nconns; i++) {
    struct wconn *c = &conns[i];
    if ((c->state == 1 || c->state == 2) && c->since < before)
      ws_down(c, "WebSocket: WebSocket handshake timed out");
    else if (c->state == 0 && now >= c->retry_at)
      ws_connect(c);
  }
}

/* The lanes ready now send, if the window lets them (those that fail at once send again on the next turn); over ws
   each connection's new frames are written with one call. */
static void send_ready(double t) {
  int k = nready;
  for (int i = 0; i < k; i++) {
    struct lane *l = lanes[readyq[i]];
    l->ready = 0;
    if (!l->busy && sending_at(t)) send_lane(l);
  }
  memmove(readyq, readyq + k, (size_t)(nready - k) * sizeof(*readyq));
  nready -= k;
  for (int i = 0; i < ndirty; i++) {
    conns[dirty[i]].want_out = 0;
    ws_flush(&conns[dirty[i]]);
  }
  ndirty = 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || (strcmp(argv[1], "http") && strcmp(argv[1], "ws")) || (!strcmp(argv[1], "ws") && argc != 8)) {
    fprintf(stderr, "usage: native-sender http HOST PORT TIMEOUT_MS | ws HOST PORT TIMEOUT_MS CONNECTIONS HANDSHAKE ACCEPT\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  ws_mode = !strcmp(argv[1], "ws");
  timeout_ms = atof(argv[4]);
  if (!(timeout_ms > 0)) timeout_ms = 10000;
  struct addrinfo hints = {0}, *ai, *pick = NULL;
  hints.ai_socktype = SOCK_STREAM;
  int gai = getaddrinfo(argv[2], argv[3], &hints, &ai);
  if (gai) {
    fprintf(stderr, "native-sender: %s: %s\n", argv[2], gai_strerror(gai));
    return 1;
  }
  for (struct addrinfo *a = ai; a && !pick; a = a->ai_next)
    if (a->ai_family == AF_INET) pick = a; /* IPv4 first, as most nodes listen on it */
  if (!pick) pick = ai;
  memcpy(&addr, pick->ai_addr, pick->ai_addrlen);
  addrlen = pick->ai_addrlen;
  freeaddrinfo(ai);
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  lanes = calloc(MAX_LANES, sizeof(*lanes));
  readyq = calloc(MAX_LANES, sizeof(*readyq));
  if (ws_mode) {
    nconns = atoi(argv[5]);
    if (nconns < 1 || nconns > 4096) return 2;
    handshake = argv[6];
    accept_value = argv[7];
    conns = calloc((size_t)nconns, sizeof(*conns));
    dirty = calloc((size_t)nconns, sizeof(*dirty));
    for (int i = 0; i < nconns; i++) {
      conns[i].tag = T_WS;
      conns[i].fd = -1;
      conns[i].next_id = 1;
      conns[i].retry_ms = RECONNECT_MIN_MS;
      ws_connect(&conns[i]);
    }
  }
  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  fcntl(1, F_SETPIPE_SZ, FLUSH_BYTES); /* a flush written at once, where the system allows a pipe that large */
  watch(0, &stdin_tag, EPOLLIN, EPOLL_CTL_ADD);
  double every = timeout_ms / 4 < 10 ? 10 : timeout_ms / 4 > 250 ? 250 : timeout_ms / 4;
  tick_turn();
  double next_sweep = now_mono + every;
  last_flush = now_mono;
  struct epoll_event evs[256];
  for (;;) {
    double now = now_mono; /* as of the last turn's end: a few microseconds ago */
    double t = now_wall();
    double gate = next_gate(t);
    int busy = under_way() || out.len;
    double wait = (busy ? FLUSH_MS : 250) - (now - last_flush);
    if (next_sweep - now < wait) wait = next_sweep - now;
    if (gate && gate - t < wait) wait = gate - t;
    if (nready) wait = 0;
    if (wait < 0) wait = 0;
    int n = epoll_wait(ep, evs, 256, (int)(wait + 0.999));
    if (n < 0 && errno != EINTR) die("epoll_wait");
    tick_turn();
    for (int e = 0; e < n; e++) {
      if (e) tick_event();
      int tag = *(int *)evs[e].data.ptr;
      if (tag == T_STDIN) read_control();
      else if (tag == T_HTTP) http_event(evs[e].data.ptr, evs[e].events);
      else ws_event(evs[e].data.ptr, evs[e].events);
      send_ready(now_wall()); /* at once, as wrk does: the server works on these while the next events are read */
    }
    now = now_mono;
    t = now_wall();
    if (gate && t >= gate)
      for (int i = 0; i < nlanes; i++) push_ready(i);
    if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + every;
    }
    send_ready(t);
    windows_done(t);
    if (out.len >= FLUSH_BYTES || (now - last_flush >= FLUSH_MS && (out.len || under_way()))) flush_records();
    else if (now - last_flush >= 250) last_flush = now; /* idle: nothing to say */
  }
}
