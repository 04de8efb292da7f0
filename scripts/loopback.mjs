// Preloaded (`node --import`) into the conformance suite's reference server, which listens on every interface
// (`app.listen(PORT)`): a listen given a port and no host binds 127.0.0.1 instead, so the server is reachable
// from this machine only.
import net from 'node:net'

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1')
  return listen.apply(this, args)
}
