"""The HTTP side: the resources' router (``dispatch``), the app with its other routes, the HTTP/1.1 server, the web
view, discovery, and the OpenAPI routes."""
