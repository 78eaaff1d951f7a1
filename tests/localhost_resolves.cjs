// Preloaded into Playwright's driver (tests/browser_support.py, driver): its API requests
// (page.request) resolve "localhost" and every "*.localhost" name to 127.0.0.1, as Chromium
// does by itself, so they reach the course hub's hosts (LOGIN.hub.localhost, ...) with no DNS set-up.
"use strict";
const dns = require("dns");
const loopback = (host) => typeof host === "string" && (host === "localhost" || host.endsWith(".localhost"));
const refused = (host) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), {code: "ENOTFOUND", hostname: host});
const v4 = {address: "127.0.0.1", family: 4};

const promised = dns.promises.lookup;
dns.promises.lookup = function lookup(host, options) {
  if (!loopback(host)) return promised.apply(this, arguments);
  const family = typeof options === "object" && options ? options.family : options;
  if (family === 6) return Promise.reject(refused(host));
  return Promise.resolve(typeof options === "object" && options && options.all ? [v4] : v4);
};

const called = dns.lookup;
dns.lookup = function lookup(host, options, callback) {
  if (!loopback(host)) return called.apply(this, arguments);
  if (typeof options === "function") [options, callback] = [{}, options];
  const family = typeof options === "object" && options ? options.family : options;
  process.nextTick(() => {
    if (family === 6) callback(refused(host));
    else if (typeof options === "object" && options && options.all) callback(null, [v4]);
    else callback(null, v4.address, 4);
  });
};
