"""What a finished book can be made into besides its .m4b, without speaking it again."""
