/*
 * ws-static-responder: a WebSocket JSON-RPC server that answers every request
 * with one fixed result, for npm run bench's static part over WebSocket (the
 * HTTP one is HAProxy's `http-request return`, which speaks no WebSocket).
 * One thread, epoll: it serves far more answers per second on one core than a
 * client can ask for on another, so the client's core is the limit.
 *
 *   ws-static-responder PORT STATS_PORT RESULT
 *
 * Listens on 127.0.0.1:PORT; after the opening handshake (RFC 6455, the accept
 * key computed), every final text frame is answered with
 * {"jsonrpc":"2.0","id":ID,"result":RESULT}, ID copied from the request (the
 * clients match answers by id); ping gets pong, close ends the connection.
 * The answers of one read are written with one call. A connection to
 * 127.0.0.1:STATS_PORT gets the number of answers so far, as text, and is
 * closed: the bench's count of requests.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF (1 << 16)
#define OUT (1 << 18)

struct conn {
  int fd;
  int open; /* the handshake done */
  size_t have;
  unsigned char in[BUF];
  size_t pending; /* answers not yet written (the socket was full) */
  int watching_out; /* answers pending: the socket is watched for room to write them, not for more to read */
  unsigned char out[OUT];
};

static unsigned long long answers;
static char tail[4096]; /* what follows the id in every answer: ,"result":RESULT} */
static size_t tail_len;

static void die(const char *what) {
  perror(what);
  exit(1);
}

/* SHA-1 (FIPS 180-4) of a short message, for the handshake's accept key alone. */
static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char digest[20]) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  size_t total = ((len + 8) / 64 + 1) * 64;
  unsigned char *m = calloc(total, 1);
  memcpy(m, msg, len);
  m[len] = 0x80;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) m[total - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t off = 0; off < total; off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 |
             (uint32_t)m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
      uint32_t f, k;
      if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else f = b ^ c ^ d, k = 0xCA62C1D6;
      uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  free(m);
  for (int i = 0; i < 20; i++) digest[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const unsigned char *in, size_t len, char *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
    out[o++] = abc[v >> 18 & 63];
    out[o++] = abc[v >> 12 & 63];
    out[o++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
    out[o++] = i + 2 < len ? abc[v & 63] : '=';
  }
  out[o] = 0;
}

static void close_conn(struct conn *c) {
  close(c->fd);
  free(c);
}

/* Writes what is pending; 0 when the socket is gone. Whatever the socket did not take stays pending. */
static int flush(int ep, struct conn *c) {
  size_t done = 0;
  while (done < c->pending) {
    ssize_t w = write(c->fd, c->out + done, c->pending - done);
    if (w > 0) done += (size_t)w;
    else if (w < 0 && errno == EINTR) continue;
    else if (w < 0 && errno == EAGAIN) break;
    else return 0;
  }
  memmove(c->out, c->out + done, c->pending - done);
  c->pending -= done;
  if ((c->pending != 0) != c->watching_out) { /* a system call only when that changes */
    c->watching_out = c->pending != 0;
    struct epoll_event ev = {.events = c->watching_out ? EPOLLOUT : EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  }
  return 1;
}

/* Appends an unmasked frame (opcode, payload) to the pending output; 0 when it does not fit. */
static int put_frame(struct conn *c, int opcode, const char *a, size_t alen, const char *b, size_t blen,
                     const char *z, size_t zlen) {
  size_t len = alen + blen + zlen;
  if (c->pending + len + 4 > OUT || len > 65535) return 0;
  unsigned char *o = c->out + c->pending;
  size_t at = 0;
  o[at++] = (unsigned char)(0x80 | opcode);
  if (len < 126) {
    o[at++] = (unsigned char)len;
  } else {
    o[at++] = 126;
    o[at++] = (unsigned char)(len >> 8);
    o[at++] = (unsigned char)len;
  }
  memcpy(o + at, a, alen);
  memcpy(o + at + alen, b, blen);
  memcpy(o + at + alen + blen, z, zlen);
  c->pending += at + len;
  return 1;
}

/* The request's "id" value as it is written (a number, a string or null); "null" when it has none. */
static void request_id(const char *p, size_t n, const char **id, size_t *idlen) {
  *id = "null", *idlen = 4;
  const char *k = memmem(p, n, "\"id\"", 4);
  if (!k) return;
  const char *v = k + 4, *end = p + n;
  while (v < end && (*v == ' ' || *v == ':')) v++;
  const char *e = v;
  if (e < end && *e == '"') {
    for (e++; e < end && *e != '"'; e++)
      if (*e == '\\') e++;
    e++;
  } else {
    while (e < end && *e != ',' && *e != '}' && *e != ' ') e++;
  }
  if (e > end || e == v) return;
  *id = v, *idlen = (size_t)(e - v);
}

/* Answers the whole frames at the start of c->in; the rest kept. 0: close the connection. */
static int take_frames(struct conn *c) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  char body[BUF];
  size_t at = 0;
  while (c->have - at >= 6) {
    unsigned char b0 = c->in[at], b1 = c->in[at + 1];
    uint64_t len = b1 & 0x7f;
    size_t hl = 2;
    if (len == 126) {
      len = (uint64_t)c->in[at + 2] << 8 | c->in[at + 3];
      hl = 4;
    } else if (len == 127) {
      return 0; /* no request is that long */
    }
    if (!(b1 & 0x80) || len > sizeof(body)) return 0; /* a client's frames are masked */
    if (c->have - at < hl + 4 + len) break;
    const unsigned char *mask = c->in + at + hl, *p = mask + 4;
    for (size_t i = 0; i < len; i++) body[i] = (char)(p[i] ^ mask[i & 3]);
    int opcode = b0 & 0x0f;
    if (opcode == 8) return 0;
    if (opcode == 9 && !put_frame(c, 10, body, len, "", 0, "", 0)) break;
    if (opcode == 1 && (b0 & 0x80)) {
      const char *id;
      size_t idlen;
      request_id(body, len, &id, &idlen);
      if (!put_frame(c, 1, head, sizeof(head) - 1, id, idlen, tail, tail_len)) break;
      answers++;
    }
    at += hl + 4 + len;
  }
  memmove(c->in, c->in + at, c->have - at);
  c->have -= at;
  return 1;
}

/* The opening handshake once its head is in; 0: not a WebSocket request (closed), 1: done or not yet whole. */
static int handshake(struct conn *c) {
  c->in[c->have] = 0;
  char *end = strstr((char *)c->in, "\r\n\r\n");
  if (!end) return c->have < BUF - 1;
  char *key = strcasestr((char *)c->in, "\r\nSec-WebSocket-Key:");
  if (!key || key > end) return 0;
  key += 20;
  while (*key == ' ') key++;
  size_t klen = strcspn(key, "\r\n ");
  char both[128];
  if (klen > 64) return 0;
  snprintf(both, sizeof(both), "%.*s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", (int)klen, key);
  unsigned char digest[20];
  sha1((unsigned char *)both, strlen(both), digest);
  char accept[32];
  base64(digest, 20, accept);
  c->pending = (size_t)snprintf((char *)c->out, OUT,
                                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: %s\r\n\r\n",
                                accept);
  size_t used = (size_t)(end + 4 - (char *)c->in);
  memmove(c->in, c->in + used, c->have - used);
  c->have -= used;
  c->open = 1;
  return 1;
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024)) die("listen");
  return fd;
}

/*
 * Answers what was read and reads more, until the socket has nothing more or the answers pile up (a client that does
 * not read them: the connection then waits for room to write before it reads again); 0: close the connection.
 */
static int serve(int ep, struct conn *c) {
  if (c->pending && !flush(ep, c)) return 0;
  for (;;) {
    if (c->open && !take_frames(c)) return 0;
    if (c->pending > OUT / 2) break;
    if (c->have >= BUF - 1) return 0; /* a frame that cannot fit */
    ssize_t r = read(c->fd, c->in + c->have, BUF - 1 - c->have);
    if (r > 0) {
      c->have += (size_t)r;
      if (!c->open && !handshake(c)) return 0;
      continue;
    }
    if (r == 0) return 0;
    if (errno == EAGAIN) break;
    if (errno != EINTR) return 0;
  }
  return flush(ep, c);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: ws-static-responder PORT STATS_PORT RESULT\n");
    return 2;
  }
  int tl = snprintf(tail, sizeof(tail), ",\"result\":%s}", argv[3]);
  if (tl < 0 || (size_t)tl >= sizeof(tail)) return 2;
  tail_len = (size_t)tl;
  int lfd = listen_on(atoi(argv[1])), sfd = listen_on(atoi(argv[2]));
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &lfd};
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  ev.data.ptr = &sfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  struct epoll_event evs[64];
  for (;;) {
    int n = epoll_wait(ep, evs, 64, -1);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int e = 0; e < n; e++) {
      if (evs[e].data.ptr == &sfd) {
        int s = accept(sfd, NULL, NULL);
        if (s < 0) continue;
        char text[32];
        int tl = snprintf(text, sizeof(text), "%llu\n", answers);
        if (write(s, text, (size_t)tl) < 0) perror("stats");
        close(s);
      } else if (evs[e].data.ptr == &lfd) {
        int s;
        while ((s = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          int one = 1;
          setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          struct conn *c = calloc(1, sizeof(*c));
          c->fd = s;
          struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, s, &cev);
        }
      } else {
        struct conn *c = evs[e].data.ptr;
        if (!serve(ep, c)) close_conn(c);
      }
    }
  }
}
