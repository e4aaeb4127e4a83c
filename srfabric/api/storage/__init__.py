"""Where the API keeps its resources: the tables (``tables``), their migrations, opening and migrating the database
(``database``), and resources in and out of it (``repository``)."""
