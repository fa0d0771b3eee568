/*
 * ws-reference: about the least CPU a WebSocket JSON-RPC client can spend per
 * request, the reference npm run bench holds the lean engine's WebSocket path
 * against (wrk, its reference over HTTP, speaks no WebSocket).
 *
 *   ws-reference HOST PORT PATH CONNECTIONS DEPTH SECONDS BODY
 *
 * Opens CONNECTIONS WebSockets to ws://HOST:PORT/PATH, keeps DEPTH requests in
 * flight on each (BODY as one text frame, masked with a key from a pool of
 * random bytes, as a client must), and sends the next request as each answer
 * arrives, the frames one read set off written with one call. One thread,
 * epoll, no parsing of the answers beyond their frame headers: what wrk does
 * for HTTP. Prints the number of answers when SECONDS are over.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/tcp.h>

#define BUF (1 << 20)
#define MAX_DEPTH 256

struct conn {
  int fd;
  unsigned char *in;
  size_t have;
};

static unsigned char pool[8192];
static size_t pool_at = sizeof(pool);

static void die(const char *what) {
  perror(what);
  exit(1);
}

static const unsigned char *mask_key(void) {
  if (pool_at + 4 > sizeof(pool)) {
    if (getrandom(pool, sizeof(pool), 0) != (ssize_t)sizeof(pool)) die("getrandom");
    pool_at = 0;
  }
  pool_at += 4;
  return pool + pool_at - 4;
}

/* One masked text frame of body into out; its length. */
static size_t frame(unsigned char *out, const char *body, size_t len) {
  size_t at = 0;
  out[at++] = 0x81;
  if (len < 126) {
    out[at++] = 0x80 | (unsigned char)len;
  } else {
    out[at++] = 0x80 | 126;
    out[at++] = (unsigned char)(len >> 8);
    out[at++] = (unsigned char)len;
  }
  const unsigned char *k = mask_key();
  memcpy(out + at, k, 4);
  at += 4;
  for (size_t i = 0; i < len; i++) out[at + i] = (unsigned char)body[i] ^ k[i & 3];
  return at + len;
}

static void write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      die("write");
    }
    p += w;
    n -= (size_t)w;
  }
}

/* A blocking connect and the opening handshake; the socket then non-blocking. */
static int open_ws(const char *host, const char *port, const char *path) {
  struct addrinfo hints = {0}, *ai;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &ai)) die("getaddrinfo");
  int fd = socket(ai->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) die("connect");
  freeaddrinfo(ai);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  char req[512];
  int n = snprintf(req, sizeof(req),
                   "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                   path, host, port);
  write_all(fd, (unsigned char *)req, (size_t)n);
  char head[4096];
  size_t got = 0;
  while (got < sizeof(head) - 1) {
    ssize_t r = read(fd, head + got, 1); /* byte by byte: nothing of the first frame is read here */
    if (r <= 0) die("handshake");
    got += (size_t)r;
    head[got] = 0;
    if (got >= 4 && !memcmp(head + got - 4, "\r\n\r\n", 4)) break;
  }
  if (strncmp(head, "HTTP/1.1 101", 12)) {
    fprintf(stderr, "ws-reference: no upgrade: %.60s\n", head);
    exit(1);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

/* Whole frames at the start of c->in: the answers among them (final data frames); the rest kept. */
static int take_frames(struct conn *c) {
  size_t at = 0;
  int answers = 0;
  while (c->have - at >= 2) {
    unsigned char b0 = c->in[at], b1 = c->in[at + 1];
    uint64_t len = b1 & 0x7f;
    size_t head = 2;
    if (len == 126) {
      if (c->have - at < 4) break;
      len = ((uint64_t)c->in[at + 2] << 8) | c->in[at + 3];
      head = 4;
    } else if (len == 127) {
      if (c->have - at < 10) break;
      len = 0;
      for (int i = 0; i < 8; i++) len = (len << 8) | c->in[at + 2 + i];
      head = 10;
    }
    if (len + head > BUF) {
      fprintf(stderr, "ws-reference: a frame of %llu bytes\n", (unsigned long long)len);
      exit(1);
    }
    if (c->have - at < head + len) break;
    int opcode = b0 & 0x0f;
    if (opcode == 8) {
      fprintf(stderr, "ws-reference: the server closed the connection\n");
      exit(1);
    }
    if ((b0 & 0x80) && opcode <= 2) answers++;
    at += head + len;
  }
  memmove(c->in, c->in + at, c->have - at);
  c->have -= at;
  return answers;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: ws-reference HOST PORT PATH CONNECTIONS DEPTH SECONDS BODY\n");
    return 2;
  }
  int nconn = atoi(argv[4]), depth = atoi(argv[5]);
  double seconds = atof(argv[6]);
  const char *body = argv[7];
  size_t blen = strlen(body);
  if (nconn < 1 || depth < 1 || depth > MAX_DEPTH || blen > 65535) return 2;
  unsigned char *out = malloc((blen + 8) * MAX_DEPTH);
  struct conn *conns = calloc((size_t)nconn, sizeof(*conns));
  int ep = epoll_create1(0);
  for (int i = 0; i < nconn; i++) {
    conns[i].fd = open_ws(argv[1], argv[2], argv[3]);
    conns[i].in = malloc(BUF);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev)) die("epoll_ctl");
    size_t n = 0;
    for (int d = 0; d < depth; d++) n += frame(out + n, body, blen);
    write_all(conns[i].fd, out, n);
  }
  unsigned long long answers = 0;
  double end = now_s() + seconds;
  struct epoll_event evs[64];
  while (now_s() < end) {
    int n = epoll_wait(ep, evs, 64, 100);
    for (int e = 0; e < n; e++) {
      struct conn *c = evs[e].data.ptr;
      for (;;) {
        ssize_t r = read(c->fd, c->in + c->have, BUF - c->have);
        if (r > 0) {
          c->have += (size_t)r;
          if (c->have == BUF) break;
          continue;
        }
        if (r == 0) {
          fprintf(stderr, "ws-reference: the server closed the connection\n");
          return 1;
        }
        if (errno == EAGAIN) break;
        if (errno != EINTR) die("read");
      }
      int k = take_frames(c);
      answers += (unsigned long long)k;
      size_t m = 0;
      for (int i = 0; i < k; i++) m += frame(out + m, body, blen);
      if (m) write_all(c->fd, out, m);
    }
  }
  printf("%llu\n", answers);
  return 0;
}
