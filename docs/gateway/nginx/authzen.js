// nginx's enforcement point for the decision service (njs >= 0.7): `auth_request` sends every request of a
// protected location to an internal location whose `js_content` is `authzen.evaluate`, which asks the decision
// service's `POST /access/v1/evaluation` and answers 204 (permit: nginx proxies the request) or 403 (deny).
// Fails closed: a request it cannot map, a decision service that does not answer 200, an answer without
// `decision: true`, a timeout or any exception is a 403, and the reason goes to nginx's error log.
//
// The question: subject = the user the gateway's authentication put in X-Authenticated-User (the gateway must
// set or clear that header on every request: a client must never supply it), resource = the item id of the
// path /items/<url-encoded item id>/…, action = the method's (reads use the item's API access, writes need
// editor). Set by the server block: $authzen_evaluation_url (the route's URL) and $authzen_authorization (the
// Authorization header of an enforcement point: a bearer token with the decision_client role).
/* global ngx */
const ACTIONS = { GET: 'api', HEAD: 'api', POST: 'editor', PUT: 'editor', PATCH: 'editor', DELETE: 'editor' };
const ITEM_PATH = /^\/items\/([^/?]+)/;

/** The AuthZEN evaluation of the request nginx is asking about; undefined when one of its parts is missing. */
function question(r) {
  const subject = r.headersIn['X-Authenticated-User'];
  const item = ITEM_PATH.exec(r.variables.request_uri);
  const action = ACTIONS[r.variables.request_method];
  if (!subject || !item || !action) return undefined;
  return {
    subject: { type: 'user', id: subject },
    resource: { type: 'DATABANK', id: decodeURIComponent(item[1]) },
    action: { name: action },
  };
}

/** Resolves true only on a 200 answer with `decision: true`. */
function permitted(r, body) {
  return ngx
    .fetch(r.variables.authzen_evaluation_url, {
      method: 'POST',
      headers: { Authorization: r.variables.authzen_authorization, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
    .then((reply) => {
      if (reply.status === 200) return reply.json();
      throw new Error(`the decision service answered ${reply.status}`);
    })
    .then((answer) => answer.decision === true);
}

// Promise chains rather than async functions: njs 0.7.9 (Debian bookworm's) crashes the worker when an async
// function awaits a second time after ngx.fetch (the response body).
function evaluate(r) {
  let body;
  try {
    body = question(r);
  } catch (error) {
    // decodeURIComponent: an item id that is not valid percent-encoding is no question either. (njs 0.7.9
    // has no catch without a binding.)
    r.warn(`authzen: ${error}`);
  }
  if (body === undefined) {
    r.warn('authzen: no subject, item or known method in the request; denied');
    r.return(403);
    return;
  }
  permitted(r, body)
    .then((permit) => r.return(permit ? 204 : 403))
    .catch((error) => {
      r.error(`authzen: ${error}; denied`);
      r.return(403);
    });
}

export default { evaluate };
